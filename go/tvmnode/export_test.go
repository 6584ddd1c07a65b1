package tvmnode

// LivePins is the number of Go slices pinned under tensors (TensorView).
func LivePins() int64 { return livePins.Load() }
