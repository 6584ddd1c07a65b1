package serve

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	pb "tvmnode.dev/go/serve/inference"
)

// elemSize is the size of an element of a protocol datatype (0: unknown).
func elemSize(dt string) int {
	switch dt {
	case "BOOL", "INT8", "UINT8":
		return 1
	case "INT16", "UINT16", "FP16":
		return 2
	case "INT32", "UINT32", "FP32":
		return 4
	case "INT64", "UINT64", "FP64":
		return 8
	}
	return 0
}

// appendInt appends v as an integer of datatype dt, range-checked.
func appendInt(buf []byte, dt string, v int64) ([]byte, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch dt {
	case "INT8":
		lo, hi = math.MinInt8, math.MaxInt8
	case "INT16":
		lo, hi = math.MinInt16, math.MaxInt16
	case "INT32":
		lo, hi = math.MinInt32, math.MaxInt32
	case "UINT8", "BOOL":
		lo, hi = 0, math.MaxUint8
		if dt == "BOOL" {
			hi = 1
		}
	case "UINT16":
		lo, hi = 0, math.MaxUint16
	case "UINT32":
		lo, hi = 0, math.MaxUint32
	case "UINT64":
		lo = 0
	}
	if v < lo || v > hi {
		return nil, fmt.Errorf("%d is out of the range of %s [%d, %d]", v, dt, lo, hi)
	}
	switch elemSize(dt) {
	case 1:
		return append(buf, byte(v)), nil
	case 2:
		return binary.LittleEndian.AppendUint16(buf, uint16(v)), nil
	case 4:
		return binary.LittleEndian.AppendUint32(buf, uint32(v)), nil
	}
	return binary.LittleEndian.AppendUint64(buf, uint64(v)), nil
}

// contentsBytes encodes the typed contents of a gRPC input as its bytes.
func contentsBytes(c *pb.InferTensorContents, dt string) ([]byte, error) {
	if c == nil {
		return nil, errors.New("no data: give raw_input_contents or contents")
	}
	var buf []byte
	var err error
	ints := func(vals []int64) ([]byte, error) {
		for _, v := range vals {
			if buf, err = appendInt(buf, dt, v); err != nil {
				return nil, err
			}
		}
		return buf, nil
	}
	switch dt {
	case "INT8", "INT16", "INT32":
		vals := make([]int64, len(c.IntContents))
		for i, v := range c.IntContents {
			vals[i] = int64(v)
		}
		return ints(vals)
	case "UINT8", "UINT16", "UINT32":
		vals := make([]int64, len(c.UintContents))
		for i, v := range c.UintContents {
			vals[i] = int64(v)
		}
		return ints(vals)
	case "INT64":
		return ints(c.Int64Contents)
	case "UINT64":
		for _, v := range c.Uint64Contents {
			buf = binary.LittleEndian.AppendUint64(buf, v)
		}
		return buf, nil
	case "BOOL":
		for _, v := range c.BoolContents {
			b := byte(0)
			if v {
				b = 1
			}
			buf = append(buf, b)
		}
		return buf, nil
	case "FP32":
		for _, v := range c.Fp32Contents {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		return buf, nil
	case "FP64":
		for _, v := range c.Fp64Contents {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		return buf, nil
	}
	return nil, fmt.Errorf("datatype %s has no contents field this server reads", dt)
}

// jsonBytes encodes the "data" of a JSON input (flat or nested arrays of
// numbers, or booleans for BOOL) as its bytes.
func jsonBytes(raw json.RawMessage, dt string) ([]byte, error) {
	if len(raw) == 0 {
		return nil, errors.New("no \"data\" (and no binary_data_size)")
	}
	var v interface{}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("\"data\": %v", err)
	}
	var buf []byte
	var walk func(v interface{}) error
	walk = func(v interface{}) error {
		switch x := v.(type) {
		case []interface{}:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
			return nil
		case bool:
			if dt != "BOOL" {
				return fmt.Errorf("\"data\" holds a boolean, the input is %s", dt)
			}
			b := byte(0)
			if x {
				b = 1
			}
			buf = append(buf, b)
			return nil
		case json.Number:
			var err error
			switch dt {
			case "FP32":
				f, e := strconv.ParseFloat(string(x), 32)
				if e != nil {
					return fmt.Errorf("\"data\": %s is not an FP32 number", x)
				}
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(f)))
			case "FP64":
				f, e := strconv.ParseFloat(string(x), 64)
				if e != nil {
					return fmt.Errorf("\"data\": %s is not an FP64 number", x)
				}
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
			case "UINT64":
				u, e := strconv.ParseUint(string(x), 10, 64)
				if e != nil {
					return fmt.Errorf("\"data\": %s is not a UINT64", x)
				}
				buf = binary.LittleEndian.AppendUint64(buf, u)
			default:
				i, e := strconv.ParseInt(string(x), 10, 64)
				if e != nil {
					return fmt.Errorf("\"data\": %s is not an integer", x)
				}
				buf, err = appendInt(buf, dt, i)
			}
			return err
		}
		return fmt.Errorf("\"data\" must hold numbers (or booleans), got %T", v)
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	return buf, nil
}

// jsonValues decodes an output's bytes as a flat list for JSON.
func jsonValues(data []byte, dt string) interface{} {
	n := elemSize(dt)
	if n == 0 {
		return nil
	}
	count := len(data) / n
	switch dt {
	case "FP32":
		out := make([]float32, count)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return out
	case "FP64":
		out := make([]float64, count)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
		return out
	case "BOOL":
		out := make([]bool, count)
		for i := range out {
			out[i] = data[i] != 0
		}
		return out
	case "UINT64":
		out := make([]uint64, count)
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(data[8*i:])
		}
		return out
	}
	out := make([]int64, count)
	for i := range out {
		switch dt {
		case "INT8":
			out[i] = int64(int8(data[i]))
		case "UINT8":
			out[i] = int64(data[i])
		case "INT16":
			out[i] = int64(int16(binary.LittleEndian.Uint16(data[2*i:])))
		case "UINT16":
			out[i] = int64(binary.LittleEndian.Uint16(data[2*i:]))
		case "INT32":
			out[i] = int64(int32(binary.LittleEndian.Uint32(data[4*i:])))
		case "UINT32":
			out[i] = int64(binary.LittleEndian.Uint32(data[4*i:]))
		case "INT64":
			out[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
	}
	return out
}

// formatSeconds writes the per-repeat seconds as a comma-separated list.
func formatSeconds(s []float64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.FormatFloat(v, 'g', 9, 64)
	}
	return strings.Join(parts, ",")
}

// formatCounts is counts as one parameter string, comma-separated.
func formatCounts(c []uint64) string {
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(parts, ",")
}
