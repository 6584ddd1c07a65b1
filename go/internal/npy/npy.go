// Package npy reads and writes numpy's .npy files: version 1.0 to 3.0
// headers, little-endian C-order arrays of int8, uint8, int32 and float32
// (what the example and the tests exchange with numpy). Anything else
// (Fortran order, big-endian data, other dtypes, pickled objects, .npz
// archives) is an error that says what the file holds and what is read.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Array is an array read from, or to write to, a .npy file. Data is
// []int8, []uint8, []int32 or []float32.
type Array struct {
	Shape []int64
	Data  interface{}
}

var magic = []byte("\x93NUMPY")

// The numpy descrs read and written, by element type.
var descrs = map[string]string{"|i1": "int8", "|u1": "uint8", "<i4": "int32", "<f4": "float32"}

// ReadFile reads the .npy file at path.
func ReadFile(path string) (Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return Array{}, err
	}
	defer f.Close()
	a, err := Read(f)
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

var (
	reDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	reFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	reShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// Read reads one array in the .npy format.
func Read(r io.Reader) (Array, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return Array{}, fmt.Errorf("not a .npy file (too short): %w", err)
	}
	if !bytes.Equal(pre[:6], magic) {
		if bytes.HasPrefix(pre[:], []byte("PK")) {
			return Array{}, errors.New("a .npz archive, not a .npy file (save one array with numpy.save)")
		}
		return Array{}, errors.New("not a .npy file (no \\x93NUMPY magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var n [2]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return Array{}, fmt.Errorf("truncated header: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint16(n[:]))
	case 2, 3:
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return Array{}, fmt.Errorf("truncated header: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(n[:]))
		if hlen > 1<<20 {
			return Array{}, fmt.Errorf("header of %d bytes: not a plain array", hlen)
		}
	default:
		return Array{}, fmt.Errorf("format version %d.%d, not 1.0 to 3.0", pre[6], pre[7])
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return Array{}, fmt.Errorf("truncated header: %w", err)
	}
	h := string(hdr)
	m := reDescr.FindStringSubmatch(h)
	if m == nil {
		return Array{}, fmt.Errorf("header without a plain dtype ('descr'): %q (structured arrays are not read)", strings.TrimSpace(h))
	}
	descr := m[1]
	if descr == "<i1" || descr == "i1" {
		descr = "|i1"
	} else if descr == "<u1" || descr == "u1" {
		descr = "|u1"
	}
	kind, ok := descrs[descr]
	if !ok {
		return Array{}, fmt.Errorf("dtype %q is not read (int8, uint8, int32 and float32, little-endian, are)", m[1])
	}
	if f := reFortran.FindStringSubmatch(h); f == nil || f[1] != "False" {
		return Array{}, errors.New("Fortran-order array: only C order is read (numpy.ascontiguousarray first)")
	}
	s := reShape.FindStringSubmatch(h)
	if s == nil {
		return Array{}, fmt.Errorf("header without a shape: %q", strings.TrimSpace(h))
	}
	var shape []int64
	n := int64(1)
	for _, d := range strings.Split(s[1], ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(d, "L"), 10, 64)
		if err != nil || v < 0 {
			return Array{}, fmt.Errorf("bad dimension %q in the shape", d)
		}
		shape = append(shape, v)
		if v > 0 && n > math.MaxInt32/v {
			return Array{}, fmt.Errorf("shape %v is too large", shape)
		}
		n *= v
	}
	a := Array{Shape: shape}
	var err error
	switch kind {
	case "int8":
		a.Data, err = readData[int8](r, n)
	case "uint8":
		a.Data, err = readData[uint8](r, n)
	case "int32":
		a.Data, err = readData[int32](r, n)
	case "float32":
		a.Data, err = readData[float32](r, n)
	}
	if err != nil {
		return Array{}, fmt.Errorf("data of shape %v %s: %w", shape, kind, err)
	}
	return a, nil
}

func readData[T int8 | uint8 | int32 | float32](r io.Reader, n int64) ([]T, error) {
	d := make([]T, n)
	return d, binary.Read(r, binary.LittleEndian, d)
}

// WriteFile writes a as a version 1.0 .npy file.
func WriteFile(path string, a Array) error {
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Write writes a in the .npy format (version 1.0).
func Write(w io.Writer, a Array) error {
	var descr string
	var n int
	switch d := a.Data.(type) {
	case []int8:
		descr, n = "|i1", len(d)
	case []uint8:
		descr, n = "|u1", len(d)
	case []int32:
		descr, n = "<i4", len(d)
	case []float32:
		descr, n = "<f4", len(d)
	default:
		return fmt.Errorf("npy: cannot write %T (int8, uint8, int32 or float32 slices)", a.Data)
	}
	want := int64(1)
	dims := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		want *= d
		dims[i] = strconv.FormatInt(d, 10)
	}
	if want != int64(n) {
		return fmt.Errorf("npy: shape %v has %d elements, the data %d", a.Shape, want, n)
	}
	shape := strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	// Header padded with spaces and a newline so that the data starts at a
	// multiple of 64 bytes.
	total := len(magic) + 2 + 2 + len(h) + 1
	h += strings.Repeat(" ", (64-total%64)%64) + "\n"
	var pre [10]byte
	copy(pre[:], magic)
	pre[6], pre[7] = 1, 0
	binary.LittleEndian.PutUint16(pre[8:], uint16(len(h)))
	if _, err := w.Write(pre[:]); err != nil {
		return err
	}
	if _, err := io.WriteString(w, h); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, a.Data)
}
