package tvmnode_test

import (
	"errors"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	tn "tvmnode.dev/go/tvmnode"
)

func TestTensorsFromGoSlices(t *testing.T) {
	noLeaks(t)
	data := []float32{1, 2, 3, 4, 5, 6}
	a := must(tn.TensorFrom(data, 2, 3))
	defer a.Close()
	if !reflect.DeepEqual(a.Shape(), []int64{2, 3}) || a.DType() != tn.Float32 || a.Device() != tn.CPU ||
		a.NBytes() != 24 || a.NumElements() != 6 || !a.IsContiguous() {
		t.Fatalf("tensor %v: %d bytes", a, a.NBytes())
	}
	v := must(a.Float32s())
	if !reflect.DeepEqual(v, data) {
		t.Fatalf("values %v", v)
	}
	data[0] = 100 // a copy
	if v[0] != 1 {
		t.Fatal("TensorFrom did not copy")
	}
	v[1] = 7 // a view of the tensor
	if w := must(tn.ToSlice[float32](a)); w[1] != 7 {
		t.Fatal("Float32s is not a view")
	}
	one := must(tn.TensorFrom([]int32{9})) // one dimension by default
	defer one.Close()
	if !reflect.DeepEqual(one.Shape(), []int64{1}) || must(one.Int32s())[0] != 9 {
		t.Fatalf("one %v", one)
	}
	scalar := must(tn.TensorFrom([]int64{5}, []int64{}...))
	defer scalar.Close()
	if len(scalar.Shape()) != 0 || scalar.NumElements() != 1 || must(scalar.Int64s())[0] != 5 {
		t.Fatalf("scalar %v", scalar)
	}
	// every element type
	check(t, roundTrip([]int8{-1, 2}))
	check(t, roundTrip([]uint8{1, 255}))
	check(t, roundTrip([]int16{-300, 2}))
	check(t, roundTrip([]uint16{1, 65535}))
	check(t, roundTrip([]int32{-1 << 30, 2}))
	check(t, roundTrip([]uint32{1, 1 << 31}))
	check(t, roundTrip([]int64{-1 << 40, 2}))
	check(t, roundTrip([]uint64{1, 1 << 63}))
	check(t, roundTrip([]float64{0.5, -2}))
	type level int8 // a defined type has its underlying type's dtype
	if tn.DTypeOf[level]() != tn.Int8 {
		t.Error("DTypeOf[level]")
	}
	// errors
	_, err := tn.TensorFrom(data, 4, 2)
	expectErr(t, err, "ValueError", "[4 2]", "8 elements", "6")
	_, err = tn.TensorFrom(data, -1, -6)
	expectErr(t, err, "ValueError", "negative")
	_, err = a.Int8s()
	expectErr(t, err, "TypeError", "float32", "int8")
	var none *tn.Tensor
	_, err = none.Float32s()
	expectErr(t, err, "ValueError", "nil")
	if none.Shape() != nil || none.NBytes() != 0 || none.Close() != nil {
		t.Error("a nil tensor")
	}
	a.Close()
	_, err = a.Float32s()
	expectErr(t, err, "ValueError", "released")
}

func roundTrip[T tn.Element](in []T) error {
	x, err := tn.TensorFrom(in)
	if err != nil {
		return err
	}
	defer x.Close()
	if x.DType() != tn.DTypeOf[T]() {
		return tn.Errorf(tn.TypeError, "dtype %s", x.DType())
	}
	out, err := tn.ToSlice[T](x)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(in, out) {
		return tn.Errorf(tn.ValueError, "%v came back as %v", in, out)
	}
	return nil
}

// A view of a Go slice shares its memory, crosses into C and back as the
// same object, and stays pinned while C holds it, whoever drops the last
// reference.
func TestTensorViewsOfGoSlicesArePinnedWhileCHoldsThem(t *testing.T) {
	noLeaks(t)
	pins := tn.LivePins()
	data := []int8{1, 2, 3, 4}
	v := must(tn.TensorView(data, 2, 2))
	if p := must(v.Int8s()); unsafe.Pointer(&p[0]) != unsafe.Pointer(&data[0]) {
		t.Fatal("TensorView copied")
	}
	data[3] = 40
	if must(v.Int8s())[3] != 40 {
		t.Fatal("the view does not see writes to the slice")
	}
	echo := must(tn.GetGlobal("testing.echo"))
	defer echo.Release()
	back := must(echo.Call(v)).(*tn.Tensor)
	if !back.Same(v.Object) {
		t.Fatal("the tensor came back as another object")
	}
	back.Close()
	// C keeps it in an array; Go forgets both the tensor and the slice.
	arr := must(tn.NewArray(v))
	v.Close()
	data = nil
	if tn.LivePins() != pins+1 {
		t.Fatalf("pins %d, want %d", tn.LivePins(), pins+1)
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
		_ = make([]int8, 1<<16) // give the collector something to reuse
	}
	item := must(arr.At(0)).(*tn.Tensor)
	if got := must(item.Int8s()); !reflect.DeepEqual(got, []int8{1, 2, 3, 40}) {
		t.Fatalf("the pinned memory changed: %v", got)
	}
	item.Close()
	arr.Release() // the last reference: the deleter unpins
	if tn.LivePins() != pins {
		t.Fatalf("pins %d after the last reference, want %d", tn.LivePins(), pins)
	}
	empty := must(tn.TensorView([]float32{})) // nothing to pin
	if empty.NumElements() != 0 || tn.LivePins() != pins {
		t.Fatal("an empty view")
	}
	empty.Close()
	_, err := tn.TensorView([]float32{1, 2}, 3)
	expectErr(t, err, "ValueError", "3 elements")
}

func TestTensorsCrossDLPack(t *testing.T) {
	noLeaks(t)
	a := must(tn.TensorFrom([]float32{1, 2, 3, 4, 5, 6}, 3, 2))
	defer a.Close()
	m := must(a.ToDLPack()) // a DLPack consumer's view
	b := must(tn.FromDLPack(m))
	if !reflect.DeepEqual(b.Shape(), []int64{3, 2}) || b.DType() != tn.Float32 {
		t.Fatalf("imported %v", b)
	}
	av, bv := must(a.Float32s()), must(b.Float32s())
	if &av[0] != &bv[0] {
		t.Fatal("the DLPack round trip copied")
	}
	b.Close() // runs the exporter's deleter: a keeps its memory
	if must(a.Float32s())[5] != 6 {
		t.Fatal("a lost its data")
	}
	m = must(a.ToDLPack())
	tn.DeleteDLPack(m) // a consumer that is done
	tn.DeleteDLPack(nil)
	l := must(a.ToDLPackLegacy())
	c := must(tn.FromDLPackLegacy(l))
	if cv := must(c.Float32s()); &cv[0] != &av[0] {
		t.Fatal("the legacy round trip copied")
	}
	c.Close()
	_, err := tn.FromDLPack(nil)
	expectErr(t, err, "ValueError", "nil")
	_, err = (&tn.Tensor{}).ToDLPack()
	expectErr(t, err, "ValueError")
}

func TestTensorsInGoFunctions(t *testing.T) {
	noLeaks(t)
	f := must(tn.FunctionOf(func(x *tn.Tensor) (int64, error) {
		v, err := x.Int32s()
		if err != nil {
			return 0, err
		}
		var s int64
		for _, e := range v {
			s += int64(e)
		}
		return s, nil
	}))
	defer f.Release()
	x := must(tn.TensorFrom([]int32{1, 2, 3}))
	defer x.Close()
	call := must(tn.GetGlobal("testing.call")) // C calling the Go function
	defer call.Release()
	if s := must(call.Call(f, x)); s != int64(6) {
		t.Fatalf("sum %v", s)
	}
	y := must(tn.TensorFrom([]float32{1}))
	defer y.Close()
	_, err := call.Call(f, y)
	expectErr(t, err, "TypeError", "int32", "float32")
	_, err = call.Call(f, "no tensor")
	if !errors.Is(err, tn.TypeError) {
		t.Fatalf("a string for a *Tensor: %v", err)
	}
	o := must(tn.AsTensor(x.Clone()))
	o.Close()
	_, err = tn.AsTensor(f.Object)
	expectErr(t, err, "TypeError", "tn.Tensor")
}
