package npy

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTripAndRefusals(t *testing.T) {
	for _, a := range []Array{
		{Shape: []int64{2, 3}, Data: []int8{-1, 2, -3, 4, -5, 127}},
		{Shape: []int64{4}, Data: []uint8{0, 1, 254, 255}},
		{Shape: []int64{1, 2}, Data: []int32{-1 << 31, 7}},
		{Shape: []int64{}, Data: []float32{2.5}},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if !bytes.HasPrefix(b, magic) || (10+int(b[8])+int(b[9])<<8)%64 != 0 {
			t.Fatalf("header: %q", b[:16])
		}
		got, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Data, a.Data) || len(got.Shape) != len(a.Shape) {
			t.Errorf("%v came back as %v", a, got)
		}
	}
	header := func(h string) *bytes.Reader {
		b := append([]byte{}, magic...)
		b = append(b, 1, 0, byte(len(h)), 0)
		return bytes.NewReader(append(b, h...))
	}
	for _, c := range []struct {
		r    *bytes.Reader
		want string
	}{
		{header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"), `"<f8" is not read`},
		{header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"), `">f4" is not read`},
		{header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }"), "Fortran"},
		{header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"), "data of shape [2]"},
		{header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }"), "structured"},
		{bytes.NewReader([]byte("PK\x03\x04zipzip")), ".npz"},
		{bytes.NewReader([]byte("hello world")), "not a .npy file"},
	} {
		if _, err := Read(c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if err := Write(&bytes.Buffer{}, Array{Shape: []int64{3}, Data: []int8{1}}); err == nil {
		t.Error("a shape that does not match the data")
	}
	if err := Write(&bytes.Buffer{}, Array{Shape: []int64{1}, Data: []float64{1}}); err == nil {
		t.Error("float64 written")
	}
}
