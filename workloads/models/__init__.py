"""Models written here because the field's libraries do not ship them (DeepSpeech2, NeuMF)."""
