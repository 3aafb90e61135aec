package cudahost

// bucketWindow is the number of consecutive distances one Bias call of
// bucketWindows answers. The harness asks Bucket for every distance in
// [−3·span, 3·span] (up to 49k of them); one launch per distance would copy
// the [heads][buckets] identity table (1 MiB at r_max 8192, 16 heads) to
// the driver and back each time.
const bucketWindow = 4096

// bucketWindows returns a Bucket function answered by bias(lk, qOffset),
// which returns head 0's Bias row of one query at position qOffset against
// keys 0..lk−1 with an identity table: entry j is bucket(qOffset − j). A
// distance not seen yet fetches the window [rel, rel+bucketWindow) with one
// call; distances within bucketWindow of the int32 range's ends are asked
// alone (lk = 1, qOffset = rel), as before.
func bucketWindows(bias func(lk, qOffset int) []float32) func(rel int) int {
	known := map[int]int{}
	return func(rel int) int {
		if b, ok := known[rel]; ok {
			return b
		}
		const lim = 1<<31 - 1
		if rel < -lim+bucketWindow || rel > lim-bucketWindow {
			return int(bias(1, rel)[0])
		}
		top := rel + bucketWindow - 1
		for j, b := range bias(bucketWindow, top) {
			known[top-j] = int(b)
		}
		return known[rel]
	}
}
