package isofs

// SetMaxExtent makes multi-extent files testable with small files.
func SetMaxExtent(n int64) func() {
	old := maxExtent
	maxExtent = n
	return func() { maxExtent = old }
}
