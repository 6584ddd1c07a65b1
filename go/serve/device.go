package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tvmnode.dev/go/serve/device"
	"tvmnode.dev/go/serve/device/sessionpb"
	tn "tvmnode.dev/go/tvmnode"
)

// maxDeviceRepeat is the most repeats a device times in one request (the
// session message's bound, TN_CRT_SESSION_MAX_REPEAT).
const maxDeviceRepeat = 32

// crtDTypes names the crt's element types (TnCrtDType, by code).
var crtDTypes = []string{"float32", "int32", "int8", "uint8", "int64", "float64", "int16", "bool"}

// openPort opens a device's byte stream: a Unix socket (qemu's
// `-chardev socket`; refused for up to 2 s while its server starts to
// listen), which loses no byte (socket is true), or a serial port or pty
// already set up (its speed and framing are the system's: stty).
func openPort(path string) (rw io.ReadWriteCloser, socket bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false, err
	}
	if fi.Mode()&os.ModeSocket != 0 {
		conn, err := device.DialUnix(path, 2*time.Second)
		return conn, true, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	return f, false, err
}

// deviceHandle is what serves a model on a device: a session over a port
// opened once (NAME=PATH), or an emulator the server runs and restarts
// itself (NAME=qemu-m4:ARCHIVE or another target's, qemu.go).
type deviceHandle struct {
	spec  string // what --device named after NAME=: PATH or qemu-TARGET:ARCHIVE
	model string // the model's name on the device
	sess  *device.Session
	link  *device.Link
	emu   *qemuDevice
}

func (d *deviceHandle) close() {
	if d.link != nil {
		_ = d.link.Close()
		d.link = nil
	}
	if d.emu != nil {
		d.emu.close()
	}
}

// openSession starts a session with the device behind rw serving model and
// returns its metadata. Both ends start over (a request of an earlier host
// may be half through); a board that starts when we connect sends its own
// RESET, which may still end the first request. Over a stream that loses
// no byte (lossless: a Unix socket, an emulated board's UART) a frame goes
// again each qemuResend for as long as timeout allows, not at the link's
// default pace for a lossy serial line: qemu hands the board its UART's
// bytes slowly (tens of microseconds each, far more when the host is
// loaded), and a request of a few hundred bytes sent again every 200 ms
// queues copies in front of the board faster than it reads them.
func openSession(rw io.ReadWriteCloser, name, model string, lossless bool, timeout time.Duration) (
	*device.Link, *device.Session, *sessionpb.MetadataResponse, error) {
	link := device.NewLink(rw, 4096, func(line string) { log.Printf("device %s: %s", name, line) })
	if lossless {
		link.Resend = qemuResend
		link.Tries = max(2, int(timeout/qemuResend))
	}
	sess := device.NewSession(link)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := link.Send(ctx, device.Reset, nil)
	var md *sessionpb.MetadataResponse
	for try := 0; err == nil || errors.Is(err, device.ErrReset) && try < 3; try++ {
		if md, err = sess.Metadata(ctx, model); err == nil {
			break
		}
	}
	if err != nil {
		_ = link.Close()
		return nil, nil, nil, err
	}
	return link, sess, md, nil
}

// openDevice opens the device of one --device spec (NAME=PATH, or
// NAME=qemu-m4:ARCHIVE_DIR for an emulated board the server runs) and
// reads its metadata through the crt's session.
func openDevice(spec string, cfg Config, mx *metrics) (string, *deviceHandle, *sessionpb.MetadataResponse, error) {
	name, path, ok := strings.Cut(spec, "=")
	if !ok || name == "" || path == "" {
		return "", nil, nil, fmt.Errorf("serve: device '%s': expected NAME=PATH (the model's name on the device, "+
			"and its serial port or qemu's UART socket) or NAME=%sARCHIVE_DIR (an emulated board the server "+
			"runs; qemu-m7:, qemu-m33:, qemu-m55: for the other targets of firmware/targets.txt)", spec, qemuPrefix+"m4:")
	}
	h := &deviceHandle{spec: path, model: name}
	var md *sessionpb.MetadataResponse
	if target, archive, isQemu := qemuSpec(path); isQemu {
		emu, err := startQemuDevice(name, target, archive, cfg, mx)
		if err != nil {
			return "", nil, nil, err
		}
		h.emu, h.model, md = emu, emu.model, emu.metadata
	} else {
		rw, socket, err := openPort(path)
		if err != nil {
			return "", nil, nil, fmt.Errorf("serve: device '%s': %w", name, err)
		}
		if h.link, h.sess, md, err = openSession(rw, name, name, socket, cfg.DeviceTimeout); err != nil {
			return "", nil, nil, fmt.Errorf("serve: device '%s' at %s: %w", name, path, err)
		}
	}
	return name, h, md, nil
}

// loadDevices serves the model NAME on the devices of specs (NAME=PATH or
// NAME=qemu-m4:ARCHIVE_DIR, every one the same NAME): one instance per
// device, each running one request at a time, so a model on N boards runs
// N requests at once and the others wait in its queue. The model is
// described from the first device's metadata; every other device must
// describe the same inputs and outputs.
func loadDevices(specs []string, cfg Config, mx *metrics) (*model, error) {
	m := &model{idle: make(chan *instance, len(specs)), maxQueue: int64(cfg.QueueSize)}
	ports := map[string]bool{}
	for _, spec := range specs {
		// an emulated board is started once per spec; a port is one device
		name, path, _ := strings.Cut(spec, "=")
		if _, _, isQemu := qemuSpec(path); !isQemu && path != "" {
			if ports[filepath.Clean(path)] {
				return nil, fmt.Errorf("serve: device '%s': %s is given twice: one port is one device (give "+
					"each board of the model its own port)", name, path)
			}
			ports[filepath.Clean(path)] = true
		}
	}
	for _, spec := range specs {
		name, h, md, err := openDevice(spec, cfg, mx)
		if err != nil {
			m.close()
			return nil, err
		}
		m.devs = append(m.devs, h)
		ins, err := deviceTensors(h.spec, md.Inputs)
		var outs []tensorMeta
		if err == nil {
			outs, err = deviceTensors(h.spec, md.Outputs)
		}
		if err == nil && m.name == "" {
			m.name, m.path, m.ins, m.outs = name, h.spec, ins, outs
		} else if err == nil && (!sameTensors(ins, m.ins) || !sameTensors(outs, m.outs)) {
			err = fmt.Errorf("serve: device '%s': %s serves inputs %s and outputs %s, but %s serves %s and %s: "+
				"the devices of one model must serve the same model", name, h.spec, tensorList(ins),
				tensorList(outs), m.path, tensorList(m.ins), tensorList(m.outs))
		}
		if err != nil {
			m.close()
			return nil, err
		}
		m.idle <- &instance{dev: h}
	}
	return m, nil
}

// sameTensors is whether two devices describe the same tensors.
func sameTensors(a, b []tensorMeta) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].datatype != b[i].datatype || !sameShape(a[i].Shape, b[i].Shape) {
			return false
		}
	}
	return true
}

// tensorList is "[x INT8 [1 4], ...]" for an error message.
func tensorList(ts []tensorMeta) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s %s %v", t.Name, t.datatype, t.Shape))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func deviceTensors(path string, ts []*sessionpb.TensorInfo) ([]tensorMeta, error) {
	var infos []tn.TensorInfo
	for _, t := range ts {
		if t.Dtype < 0 || int(t.Dtype) >= len(crtDTypes) {
			return nil, fmt.Errorf("serve: device at %s: tensor '%s' has the element type code %d", path, t.Name,
				t.Dtype)
		}
		dt, err := tn.ParseDataType(crtDTypes[t.Dtype])
		if err != nil {
			return nil, err
		}
		info := tn.TensorInfo{Name: t.Name, DType: dt, Scale: float64(t.Scale), ZeroPoint: t.ZeroPoint}
		for _, d := range t.Shape {
			info.Shape = append(info.Shape, int64(d))
		}
		infos = append(infos, info)
	}
	out, err := describe(path, infos)
	for i := range out {
		if err == nil && out[i].nbytes != int(ts[i].Nbytes) {
			err = fmt.Errorf("serve: device at %s: tensor '%s' of shape %v is %d bytes on the device, not %d",
				path, ts[i].Name, out[i].Shape, ts[i].Nbytes, out[i].nbytes)
		}
	}
	return out, err
}

// inferDevice runs (or times) a checked request on the model's device.
// The timing is the device's own clock: seconds of its time (on an
// emulated board, virtual time at one instruction a nanosecond).
func (s *Server) inferDevice(ctx context.Context, m *model, h *deviceHandle, ins []*Input, outs []int,
	r *Request) (*Result, error) {
	if r.MinRepeatMs > 0 {
		return nil, status.Errorf(codes.InvalidArgument, "model '%s' runs on a device: parameter "+
			"'min_repeat_ms' is not supported there (give 'number')", m.name)
	}
	if r.Repeat > maxDeviceRepeat || r.Number > 1<<31 {
		return nil, status.Errorf(codes.InvalidArgument, "model '%s' runs on a device: parameter 'repeat' "+
			"must be in [0, %d] and 'number' in [0, 2^31], got %d and %d", m.name, maxDeviceRepeat, r.Repeat,
			r.Number)
	}
	data := make([][]byte, len(ins))
	for i, in := range ins {
		data[i] = in.Data
	}
	sess, run := h.sess, (*qemuRun)(nil)
	callCtx := ctx
	if h.emu != nil {
		var err error
		if run, err = h.emu.acquire(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctxError(ctx, fmt.Sprintf("model '%s': waiting for its emulator to start", m.name))
			}
			return nil, status.Errorf(codes.Unavailable, "model '%s': device %s: %v", m.name, h.spec, err)
		}
		sess = run.sess
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, h.emu.timeout)
		defer cancel()
	}
	t, err := sess.Time(callCtx, h.model, data, uint32(r.Repeat), uint32(r.Number))
	var de *device.DeviceError
	switch {
	case errors.As(err, &de) && de.Status >= 1 && de.Status <= 3:
		return nil, status.Errorf(codes.InvalidArgument, "model '%s': %v", m.name, err)
	case errors.As(err, &de): // the run failed on the device
		return nil, status.Errorf(codes.Internal, "model '%s': %v", m.name, err)
	case err != nil && ctx.Err() != nil:
		return nil, ctxError(ctx, fmt.Sprintf("model '%s' on its device", m.name))
	case err != nil && run != nil: // the emulator died or stopped answering
		return nil, status.Errorf(codes.Unavailable, "model '%s': device %s: %v; the emulator is being "+
			"restarted", m.name, h.spec, h.emu.fail(run, err, callCtx.Err() != nil))
	case err != nil:
		return nil, status.Errorf(codes.Unavailable, "model '%s': device %s: %v", m.name, h.spec, err)
	case len(t.Outputs) != len(m.outs):
		return nil, status.Errorf(codes.Internal, "model '%s': the device answered %d outputs, not %d",
			m.name, len(t.Outputs), len(m.outs))
	}
	res := &Result{}
	if r.Repeat > 0 {
		res.Number, res.RepeatSeconds = int64(t.Number), t.Seconds()
		if t.InstructionsPerTick > 0 {
			res.RepeatInstructions = t.Instructions()
		} else if h.emu != nil { // the board's own rate, known from its target
			res.RepeatInstructions = h.emu.fw.instructions(t)
		}
		if run != nil && run.cycles != nil {
			var err error
			if res.RepeatCycles, err = run.cycles.repeats(int(r.Repeat), int(t.Number)); err != nil {
				log.Printf("device %s (%s): no cycle estimate for this request: %v", m.name, h.spec, err)
			}
		}
	}
	for _, i := range outs {
		o := &m.outs[i]
		if len(t.Outputs[i]) != o.nbytes {
			return nil, status.Errorf(codes.Internal, "model '%s': the device's output '%s' is %d bytes, not %d",
				m.name, o.Name, len(t.Outputs[i]), o.nbytes)
		}
		res.Outputs = append(res.Outputs, Output{Name: o.Name, Datatype: o.datatype,
			Shape: append([]int64(nil), o.Shape...), Data: t.Outputs[i]})
	}
	return res, nil
}
