"""The download-free teacher-student workload: its spec file, its generated data, its loaders."""

from __future__ import annotations

import json

import pytest

from tests.helpers.optional import require

torch = require("torch")

from workloads._common import DatasetError  # noqa: E402
from workloads.teacher_student import DataSpec, TeacherStudent, main, make_data  # noqa: E402


def test_spec_written_by_the_command_line_generates_the_same_data_twice(tmp_path):
    assert main([str(tmp_path), "--tiny"]) == 0
    spec = DataSpec.read(tmp_path / "teacher-student.json")
    assert spec == DataSpec.for_size(True)
    a, b = make_data(spec), make_data(spec)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert a["x_train"].shape == (4096, 8) and a["y_val"].shape == (1024,)
    # Clean validation labels are the teacher's argmax; about label_noise of the training labels differ.
    again = make_data(DataSpec.for_size(True).__class__(**{**spec.__dict__, "label_noise": 0.0}))
    changed = float((again["y_train"] != a["y_train"]).float().mean())
    assert 0.02 < changed < spec.label_noise  # a flip to a random class keeps 1 in 10 unchanged
    assert torch.equal(again["y_val"], a["y_val"])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"dim": 8.5}, "dim must be a whole number"),
        ({"label_noise": 1.0}, "label_noise must lie in"),
        ({"classes": 1}, "classes >= 2"),
        ({"extra": 1}, "exactly the keys"),
    ],
)
def test_bad_spec_is_one_dataset_error(tmp_path, edit, message):
    raw = {**DataSpec().__dict__, **edit}
    (tmp_path / "teacher-student.json").write_text(json.dumps(raw))
    with pytest.raises(DatasetError, match=message) as exc:
        DataSpec.read(tmp_path / "teacher-student.json")
    assert "\n" not in str(exc.value)


def test_missing_root_and_mismatched_dims_are_dataset_errors(tmp_path):
    w = TeacherStudent(tiny=True)
    with pytest.raises(DatasetError, match=r"no teacher-student\.json"):
        w.real_loader(tmp_path, "train", 32)
    DataSpec(dim=4, train_samples=64, val_samples=16).write(tmp_path)
    with pytest.raises(DatasetError, match="has dim 4"):
        w.real_loader(tmp_path, "train", 32)


def test_epochs_shuffle_by_the_run_seed_and_cover_every_sample(tmp_path):
    DataSpec.for_size(True).write(tmp_path)
    w = TeacherStudent(tiny=True)
    orders = []
    for seed in (0, 0, 1):
        torch.manual_seed(seed)
        loader = w.real_loader(tmp_path, "train", 1000)
        batches = list(loader)
        assert len(batches) == len(loader) == 5 and len(batches[-1][0]) == 96
        orders.append(torch.cat([x for x, _ in batches]))
    assert torch.equal(orders[0], orders[1]) and not torch.equal(orders[0], orders[2])
    data = w.dataset(tmp_path)
    assert torch.equal(orders[0].sort(dim=0).values, data["x_train"].sort(dim=0).values)
    val = w.real_loader(tmp_path, "val", 300)
    assert [len(y) for _, y in val] == [300, 300, 300, 124]


def test_tiny_student_learns_the_teacher(tmp_path):
    DataSpec.for_size(True).write(tmp_path)
    w = TeacherStudent(tiny=True)
    torch.manual_seed(0)
    model = w.build_model()
    opt = w.build_optimizer(model, 64)
    before = w.evaluate(model, w.real_loader(tmp_path, "val", 512))
    for _ in range(3):
        for batch in w.real_loader(tmp_path, "train", 64):
            w.train_step(model, opt, batch)
    after = w.evaluate(model, w.real_loader(tmp_path, "val", 512))
    assert after > before + 0.2 and after > 0.5
