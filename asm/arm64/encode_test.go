package arm64

import (
	"strings"
	"testing"

	"github.com/posenc/posenc/asm/internal/asmtest"
)

// allWords returns every WORD encoding the emitter can produce for a
// spread of registers and both float arrangements.
func allWords(t *testing.T) []Word {
	t.Helper()
	var ws []Word
	regs := [][3]VReg{{0, 1, 2}, {31, 30, 29}, {5, 17, 23}, {16, 8, 31}}
	for _, a := range []Arrangement{S4, S2} {
		for _, r := range regs {
			d, n, m := r[0].As(a), r[1].As(a), r[2].As(a)
			for _, op := range []Op{OpFADD, OpFSUB, OpFMUL, OpFMAX, OpFMIN, OpFADDP, OpFMAXP} {
				w, err := Encode3(op, d, n, m)
				if err != nil {
					t.Fatal(err)
				}
				ws = append(ws, w)
			}
			// Widening: the low half of an S2 view, the high half of an S4.
			w, err := EncodeFCVTL(r[0].D2(), n)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
			// Narrowing: into the low half (S2) or the high half (S4).
			if w, err = EncodeFCVTN(d, r[1].D2()); err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
	}
	// 16-bit storage: binary16 widening and narrowing, bfloat16 widening
	// (SHLL #16) and the rounding narrow (CMGE #0, RADDHN), low and high
	// halves.
	for _, r := range regs {
		for _, h := range []Arrangement{H4, H8} {
			for _, enc := range []func() (Word, error){
				func() (Word, error) { return EncodeFCVTL(r[0].S4(), r[1].As(h)) },
				func() (Word, error) { return EncodeFCVTN(r[0].As(h), r[1].S4()) },
				func() (Word, error) { return EncodeSHLL16(r[0].S4(), r[1].As(h)) },
				func() (Word, error) { return EncodeRADDHN(r[0].As(h), r[1].S4(), r[2].S4()) },
			} {
				w, err := enc()
				if err != nil {
					t.Fatal(err)
				}
				ws = append(ws, w)
			}
		}
		for _, a := range []Arrangement{S4, S2} {
			w, err := EncodeCMGEZero(r[0].As(a), r[1].As(a))
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
	}
	// The three-register operations on float64 lanes.
	for _, r := range regs {
		d, n, m := r[0].D2(), r[1].D2(), r[2].D2()
		for _, op := range []Op{OpFADD, OpFSUB, OpFMUL, OpFMAX, OpFMIN, OpFADDP, OpFMAXP} {
			w, err := Encode3(op, d, n, m)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
	}
	return ws
}

func TestEncodingsObjdump(t *testing.T) {
	e := NewEmitter()
	e.Raw(`#include "textflag.h"`)
	e.Text("f", 0)
	ws := allWords(t)
	for _, w := range ws {
		e.word(w, nil)
	}
	e.RET()
	e.End()
	src, err := e.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if n := asmtest.CheckWords(t, src); n != len(ws) {
		t.Fatalf("checked %d of %d words", n, len(ws))
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  func() error
	}{
		{"register 32", func() error { _, err := Encode3(OpFADD, VReg(32).S4(), V0.S4(), V0.S4()); return err }},
		{"register -1", func() error { _, err := Encode3(OpFMAX, V0.S4(), VReg(-1).S4(), V0.S4()); return err }},
		{"arrangement B16", func() error { _, err := Encode3(OpFMUL, V0.B16(), V0.B16(), V0.B16()); return err }},
		{"mixed arrangement", func() error { _, err := Encode3(OpFMUL, V0.S4(), V0.S2(), V0.S4()); return err }},
		{"unknown op", func() error { _, err := Encode3(Op(99), V0.S4(), V0.S4(), V0.S4()); return err }},
		{"mixed D2", func() error { _, err := Encode3(OpFADD, V0.D2(), V0.D2(), V0.S4()); return err }},
		{"fcvtl as three", func() error { _, err := Encode3(OpFCVTL, V0.D2(), V0.S2(), V0.S2()); return err }},
		{"fcvtl to S4", func() error { _, err := EncodeFCVTL(V0.S4(), V0.S2()); return err }},
		{"fcvtl from D2", func() error { _, err := EncodeFCVTL(V0.D2(), V0.D2()); return err }},
		{"fcvtn from S4", func() error { _, err := EncodeFCVTN(V0.S2(), V0.S4()); return err }},
		{"fcvtn to D2", func() error { _, err := EncodeFCVTN(V0.D2(), V0.D2()); return err }},
		{"fcvtn register 32", func() error { _, err := EncodeFCVTN(VReg(32).S2(), V0.D2()); return err }},
		{"fcvtn as three", func() error { _, err := Encode3(OpFCVTN, V0.S2(), V0.D2(), V0.D2()); return err }},
		{"fcvtl register 32", func() error { _, err := EncodeFCVTL(V0.D2(), VReg(32).S4()); return err }},
		{"fcvtl H4 to D2", func() error { _, err := EncodeFCVTL(V0.D2(), V0.H4()); return err }},
		{"fcvtl S2 to S4", func() error { _, err := EncodeFCVTL(V0.S4(), V0.S2()); return err }},
		{"fcvtn S4 to S4", func() error { _, err := EncodeFCVTN(V0.S4(), V0.S4()); return err }},
		{"fcvtn D2 to H4", func() error { _, err := EncodeFCVTN(V0.H4(), V0.D2()); return err }},
		{"shll to D2", func() error { _, err := EncodeSHLL16(V0.D2(), V0.H4()); return err }},
		{"shll from S2", func() error { _, err := EncodeSHLL16(V0.S4(), V0.S2()); return err }},
		{"shll register 32", func() error { _, err := EncodeSHLL16(V0.S4(), VReg(32).H4()); return err }},
		{"cmge D2", func() error { _, err := EncodeCMGEZero(V0.D2(), V0.D2()); return err }},
		{"cmge H4", func() error { _, err := EncodeCMGEZero(V0.H4(), V0.H4()); return err }},
		{"cmge mixed", func() error { _, err := EncodeCMGEZero(V0.S4(), V0.S2()); return err }},
		{"raddhn to S4", func() error { _, err := EncodeRADDHN(V0.S4(), V0.S4(), V0.S4()); return err }},
		{"raddhn from S2", func() error { _, err := EncodeRADDHN(V0.H4(), V0.S2(), V0.S4()); return err }},
		{"raddhn register -1", func() error { _, err := EncodeRADDHN(V0.H4(), V0.S4(), VReg(-1).S4()); return err }},
	} {
		if c.err() == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// V0 is a shorthand for tests.
const V0 VReg = 0

func TestEmitterStickyError(t *testing.T) {
	e := NewEmitter()
	e.Text("f", 8)
	e.FADD(V0.S4(), V0.S4(), V0.S4())
	e.FADD(VReg(40).S4(), V0.S4(), V0.S4()) // first error
	e.LoadArg(Reg(18), Arg{"x", 0})         // would be a second error
	e.RET()
	e.End()
	_, err := e.Bytes()
	if err == nil || !strings.Contains(err.Error(), "V40") {
		t.Fatalf("err = %v, want the V40 error", err)
	}
	if strings.Contains(e.b.String(), "RET") {
		t.Error("instructions emitted after the error")
	}
}

func TestEmitterChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(e *Emitter)
	}{
		{"reserved R18", func(e *Emitter) { e.Mov(18, 0) }},
		{"reserved R27", func(e *Emitter) { e.Mov(0, 27) }},
		{"V32", func(e *Emitter) { e.VFMLA(VReg(32).S4(), V0.S4(), V0.S4()) }},
		{"B16 fmla", func(e *Emitter) { e.VFMLA(V0.B16(), V0.B16(), V0.B16()) }},
		{"S4 vmov", func(e *Emitter) { e.VMOV(V0.S4(), V0.S4()) }},
		{"non-consecutive", func(e *Emitter) { e.VLD1(0, true, VReg(1).S4(), VReg(3).S4()) }},
		{"five regs", func(e *Emitter) { e.VLD1(0, true, Vecs(0, 5, 1, S4)...) }},
		{"vld2 mixed", func(e *Emitter) { e.VLD2(0, true, VReg(1).S4(), VReg(2).S2()) }},
		{"undefined label", func(e *Emitter) { e.B("nowhere") }},
		{"label twice", func(e *Emitter) { e.Label("a"); e.Label("a") }},
		{"subs imm", func(e *Emitter) { e.SubsImm(0, 0, 4096) }},
		{"and mask", func(e *Emitter) { e.AndImm(0, 0, 6) }},
		{"lane", func(e *Emitter) { e.VDUPLane(V0.S4(), 1, 4) }},
		{"vshl", func(e *Emitter) { e.VSHL(V0.S4(), V0.S4(), 32) }},
		{"post", func(e *Emitter) { e.LoadS(0, 0, 256) }},
		{"lane post", func(e *Emitter) { e.LoadH(0, 0, 4) }},
		{"lane R18", func(e *Emitter) { e.StoreH(0, 18, 2) }},
		{"vld1 H8", func(e *Emitter) { e.VLD1(0, true, V0.H8()) }},
		{"uzp H4", func(e *Emitter) { e.VUZP1(V0.H4(), V0.H4(), V0.H4()) }},
		{"prfm unaligned", func(e *Emitter) { e.PRFM(0, 4) }},
		{"prfm negative", func(e *Emitter) { e.PRFM(0, -8) }},
		{"prfm far", func(e *Emitter) { e.PRFM(0, 32768) }},
		{"prfm R18", func(e *Emitter) { e.PRFM(18, 0) }},
		{"nested text", func(e *Emitter) { e.Text("g", 0) }},
	} {
		e := NewEmitter()
		e.Text("f", 0)
		c.f(e)
		e.RET()
		e.End()
		if _, err := e.Bytes(); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	e := NewEmitter()
	e.RET()
	if e.Err() == nil {
		t.Error("instruction outside TEXT accepted")
	}
	e = NewEmitter()
	e.Text("f", 0)
	if _, err := e.Bytes(); err == nil {
		t.Error("open TEXT block accepted")
	}
}

func TestEmitterText(t *testing.T) {
	e := NewEmitter()
	e.Text("f", 52)
	l := e.NewLabel("loop")
	e.Label(l)
	e.VLD1(3, true, Vecs(4, 4, 1, S4)...)
	e.VST2(3, true, VReg(31).S2(), V0.S2())
	e.FMUL(VReg(1).S4(), VReg(2).S4(), VReg(3).S4())
	e.VFMLS(VReg(1).S4(), VReg(2).S4(), VReg(3).S4())
	e.PRFM(3, 8192)
	e.FCVTL(VReg(17).D2(), VReg(4).S4())
	e.FADD(VReg(17).D2(), VReg(17).D2(), VReg(18).D2())
	e.FCVTSD(1, 4)
	e.VLD2(3, true, VReg(30).H4(), VReg(31).H4())
	e.SHLL16(30, 30)
	e.FCVTLH(31, 31)
	e.CMGEZero(2, 1)
	e.RADDHN(1, 1, 2)
	e.FCVTNH(7, 8)
	e.VZIP1(VReg(9).S4(), VReg(1).S4(), VReg(7).S4())
	e.VUZP2(VReg(9).S2(), VReg(9).S2(), VReg(9).S2())
	e.LoadH(4, 5, 2)
	e.StoreH(4, 5, 0)
	e.FDIVD(16, 16, 17)
	e.FCVTDS(16, 16)
	e.SubsImm(1, 1, 1)
	e.BNE(l)
	e.RET()
	e.End()
	got, err := e.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := "TEXT ·f(SB), NOSPLIT, $0-52\n" +
		"loop1:\n" +
		"\tVLD1.P 64(R3), [V4.S4, V5.S4, V6.S4, V7.S4]\n" +
		"\tVST2.P [V31.S2, V0.S2], 16(R3)\n" +
		"\tWORD $0x6e23dc41 // FMUL V3.S4, V2.S4, V1.S4\n" +
		"\tVFMLS V3.S4, V2.S4, V1.S4\n" +
		"\tPRFM 8192(R3), PLDL1KEEP\n" +
		"\tWORD $0x4e617891 // VFCVTL2 V4.S4, V17.D2\n" +
		"\tWORD $0x4e72d631 // FADD V18.D2, V17.D2, V17.D2\n" +
		"\tFCVTSD F4, F1\n" +
		"\tVLD2.P 16(R3), [V30.H4, V31.H4]\n" +
		"\tWORD $0x2e613bde // VSHLL $16, V30.H4, V30.S4\n" +
		"\tWORD $0x0e217bff // VFCVTL V31.H4, V31.S4\n" +
		"\tWORD $0x6ea08822 // VCMGE $0, V1.S4, V2.S4\n" +
		"\tWORD $0x2e624021 // VRADDHN V2.S4, V1.S4, V1.H4\n" +
		"\tWORD $0x0e216907 // VFCVTN V8.S4, V7.H4\n" +
		"\tVZIP1 V7.S4, V1.S4, V9.S4\n" +
		"\tVUZP2 V9.S2, V9.S2, V9.S2\n" +
		"\tVLD1.P 2(R5), V4.H[0]\n" +
		"\tVST1 V4.H[0], (R5)\n" +
		"\tFDIVD F17, F16, F16\n" +
		"\tFCVTDS F16, F16\n" +
		"\tSUBS $1, R1, R1\n" +
		"\tBNE loop1\n" +
		"\tRET\n\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
