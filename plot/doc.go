// Package plot draws posenc's pictures of a spec with gonum.org/v1/plot:
// what `posenc plot` writes.
//
// Every value plotted comes from the float64 reference in package verify
// (never from the generator), and every formula names its source:
//
//	rope      spectrum     θᵢ per rotated pair, unscaled and after the
//	                       spec's scaling (log y)
//	          decay        the long-term decay bound of RoFormer §3.4.3
//	          error        a generated kernel's error against the reference,
//	                       beside a naive float32-angle RoPE and the
//	                       verification bound of docs/design (the caller
//	                       measures it: RenderError)
//	alibi     bias         −m·|i−j| per head, slope m (Press et al.)
//	rpe_bias  buckets      the bucket of every (query, key) pair (T5 or
//	rpe_full               clamp rule)
//	          bucketcurve  bucket against relative position
//	sinusoidal, algebraic, binary, mixture, xl (its relative sinusoid)
//	          heatmap      encoding [position][dim] (coolwarm map)
//	          components   a few dims against position, coloured by
//	                       dimension (colour bar)
//
// Legends sit outside the data area, line colours never repeat within a
// chart and keep 3:1 contrast against the white background (palette.go).
//
// learned has no picture: its table is a run-time argument.
package plot
