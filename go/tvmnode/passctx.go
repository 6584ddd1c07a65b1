package tvmnode

// Pass contexts and instruments from Go, as Python's PassContext and
// pass_instrument give them: a PassContext (ir.PassContext) carries the opt
// level, a config checked against the registered options, required and
// disabled pass names and instruments; an instrument's before/after hooks
// run around every pass run under it, whatever language the pass is
// written in, and an instrument may be written in Go. The C pass
// infrastructure does the work. What is Go's own is the current context:
// C keeps it per OS thread, and a goroutine moves between threads, so a
// context is entered only for the length of PassContext.Do, with the
// goroutine locked to its thread; PassContext.Run names the context
// explicitly and needs no entering at all.

// #include "helpers.h"
import "C"

import (
	"reflect"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// PassContext is an ir.PassContext: how passes run.
type PassContext struct{ Object }

// PassInstrument is an ir.PassInstrument: hooks run before and after every
// pass of a context it is in (C, Python, Rust and Go instruments alike).
type PassInstrument struct{ Object }

// PassTimingInstrument is the C timing instrument: it times every pass it
// sees (passes that a pass requires nested under it); Render gives the
// table.
type PassTimingInstrument struct{ PassInstrument }

func init() {
	registerHandleType(reflect.TypeOf(PassContext{}), "ir.PassContext")
	registerHandleType(reflect.TypeOf(PassInstrument{}), "ir.PassInstrument")
}

// PassInfo describes a pass, as instruments see it.
type PassInfo struct {
	Name     string
	OptLevel int32    // the lowest context opt level that runs it
	Required []string // passes run before it
}

// DefaultOptLevel is the opt level of the default context.
const DefaultOptLevel = 2

// PassContextOption sets one option of NewPassContext.
type PassContextOption func(*passContextOptions) error

type passContextOptions struct {
	config      map[string]interface{}
	required    []string
	disabled    []string
	instruments []interface{}
}

// WithConfig sets config options (each must have been declared, by any
// language, with RegisterPassConfig or its equivalents; the context checks
// names and value types: a KeyError or TypeError naming the option).
func WithConfig(config map[string]interface{}) PassContextOption {
	return func(o *passContextOptions) error {
		if o.config == nil {
			o.config = map[string]interface{}{}
		}
		for k, v := range config {
			o.config[k] = v
		}
		return nil
	}
}

// WithRequiredPasses names passes that run whatever their opt level.
func WithRequiredPasses(names ...string) PassContextOption {
	return func(o *passContextOptions) error {
		o.required = append(o.required, names...)
		return nil
	}
}

// WithDisabledPasses names passes that are skipped (unless required).
func WithDisabledPasses(names ...string) PassContextOption {
	return func(o *passContextOptions) error {
		o.disabled = append(o.disabled, names...)
		return nil
	}
}

// WithInstruments adds instruments (PassInstrument, PassTimingInstrument,
// or an ir.PassInstrument from another language), run in order.
func WithInstruments(instruments ...Handle) PassContextOption {
	return func(o *passContextOptions) error {
		for _, in := range instruments {
			o.instruments = append(o.instruments, in)
		}
		return nil
	}
}

// NewPassContext makes a context of optLevel (DefaultOptLevel is what
// passes see when no context is given) with options.
func NewPassContext(optLevel int32, options ...PassContextOption) (PassContext, error) {
	var o passContextOptions
	for _, opt := range options {
		if err := opt(&o); err != nil {
			return PassContext{}, err
		}
	}
	var temps []*C.TnObject
	defer func() { releaseTemps(temps) }()
	obj := func(v interface{}) (*C.TnObject, error) {
		x, tmp, err := toAny(v)
		if err != nil {
			return nil, NewError(TypeError, "NewPassContext: "+err.Error())
		}
		if tmp != nil {
			temps = append(temps, tmp)
		}
		return anyObjPtr(&x), nil
	}
	// NULL for what was not given, as the C defaults
	var cfg, req, dis, ins *C.TnObject
	for _, opt := range []struct {
		given bool
		value interface{}
		dst   **C.TnObject
	}{{o.config != nil, o.config, &cfg}, {o.required != nil, o.required, &req},
		{o.disabled != nil, o.disabled, &dis}, {o.instruments != nil, o.instruments, &ins}} {
		if opt.given {
			p, err := obj(opt.value)
			if err != nil {
				return PassContext{}, err
			}
			*opt.dst = p
		}
	}
	ctx, err := cobj("NewPassContext", func() *C.TnObject {
		return C.tn_pass_context_new(C.int32_t(optLevel), cfg, req, dis, ins)
	})
	runtime.KeepAlive(o.instruments)
	return PassContext{ctx}, err
}

// CurrentPassContext is the context entered on this goroutine (by
// PassContext.Do), or a new default one.
func CurrentPassContext() (PassContext, error) {
	o, err := cobj("CurrentPassContext", func() *C.TnObject { return C.tn_pass_context_current() })
	return PassContext{o}, err
}

// OptLevel is the context's opt level (-1 for a nil handle).
func (c PassContext) OptLevel() int32 {
	v, err := c.Get("opt_level")
	if n, ok := v.(int64); ok && err == nil {
		return int32(n)
	}
	return -1
}

// Config is the context's config (a tn.Map; release it when done).
func (c PassContext) Config() (Map, error) {
	o, err := c.GetObject("config")
	return Map{o}, err
}

// RequiredPasses are the names the context runs whatever their opt level.
func (c PassContext) RequiredPasses() ([]string, error) { return c.names("required") }

// DisabledPasses are the names the context skips.
func (c PassContext) DisabledPasses() ([]string, error) { return c.names("disabled") }

func (c PassContext) names(field string) ([]string, error) {
	o, err := c.GetObject(field)
	if err != nil {
		return nil, err
	}
	defer o.Release()
	return Array{o}.Strings()
}

// Instruments are the context's instruments (release them when done).
func (c PassContext) Instruments() ([]PassInstrument, error) {
	objs, err := c.fieldObjects("instruments")
	if err != nil {
		return nil, err
	}
	out := make([]PassInstrument, len(objs))
	for i, x := range objs {
		out[i] = PassInstrument{x}
	}
	return out, nil
}

// Run runs pass on mod under this context (without entering it: other
// goroutines and the current context are not affected). The input module
// is never changed.
func (c PassContext) Run(pass Pass, mod IRModule) (IRModule, error) {
	cp, err := c.live("PassContext.Run")
	if err != nil {
		return IRModule{}, err
	}
	return pass.run("PassContext.Run", mod, cp, c.r)
}

// Do makes c the current context while fn runs: Pass.Run, and passes
// called from C, Python or Rust code that fn calls, run under it. The
// goroutine is locked to its OS thread meanwhile (C keeps the current
// context per thread), so goroutines that fn starts do not see c: give
// them c and use c.Run. Contexts nest. Go instruments' Enter hooks run
// first, in order, and their Exit hooks last, in reverse (also when fn
// fails or panics); the first error of fn, an Enter or an Exit hook is
// returned.
func (c PassContext) Do(fn func() error) (err error) {
	p, err := c.live("PassContext.Do")
	if err != nil {
		return err
	}
	hooks, err := c.goHooks()
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := crc("PassContext.Do", func() C.int { return C.tn_pass_context_enter(p) }); err != nil {
		return err
	}
	runtime.KeepAlive(c.r)
	entered := 0
	defer func() {
		for i := entered - 1; i >= 0; i-- {
			if h := hooks[i]; h.Exit != nil {
				if xerr := h.Exit(); xerr != nil && err == nil {
					err = xerr
				}
			}
		}
		if C.tn_pass_context_exit() != 0 {
			C.tn_error_set_raised(nil) // we entered it on this thread: cannot happen
		}
	}()
	for _, h := range hooks {
		if h.Enter != nil {
			if err := h.Enter(); err != nil {
				return err
			}
		}
		entered++
	}
	return fn()
}

// goHooks are the hooks of the context's Go instruments, in order.
func (c PassContext) goHooks() ([]*InstrumentHooks, error) {
	ins, err := c.Instruments()
	if err != nil {
		return nil, err
	}
	var hooks []*InstrumentHooks
	for _, in := range ins {
		if h := in.goHooks(); h != nil {
			hooks = append(hooks, h)
		}
		in.Release()
	}
	return hooks, nil
}

// InstrumentHooks are a Go instrument's hooks; any may be nil. Before and
// After get the module (the pass's input, or its result) and the pass; the
// module handle is valid during the call (Clone it to keep it). An error
// (or a panic) fails the pass being run, the error naming the instrument
// and the pass, with the returned error as its cause. Enter and Exit run
// when PassContext.Do enters and leaves a context holding the instrument
// (as TVM's enter_pass_ctx / exit_pass_ctx). The hooks may be called from
// any goroutine or C thread that runs passes under the context.
type InstrumentHooks struct {
	Before func(mod IRModule, info PassInfo) error
	After  func(mod IRModule, info PassInfo) error
	Enter  func() error
	Exit   func() error
}

// NewPassInstrument makes an instrument of Go hooks, usable in any
// context, including contexts made in C, Python or Rust.
func NewPassInstrument(name string, hooks InstrumentHooks) (PassInstrument, error) {
	h := &hooks
	hook := func(which string, f func(IRModule, PassInfo) error) (Function, error) {
		fn, err := FunctionOfNamed(name+"."+which, func(mod IRModule, info Object) error {
			defer mod.Release()
			defer info.Release()
			if f == nil {
				return nil // only carries the hooks (see goHooks)
			}
			pi, err := passInfo(info)
			if err != nil {
				return err
			}
			return f(mod, pi)
		})
		if err == nil {
			goFuncOf(fn).instrument = h
		}
		return fn, err
	}
	var before, after Function
	var err error
	// The before hook exists whenever there is any hook: it is how
	// PassContext.Do finds Enter and Exit.
	if hooks.Before != nil || hooks.Enter != nil || hooks.Exit != nil {
		if before, err = hook("before", hooks.Before); err != nil {
			return PassInstrument{}, err
		}
		defer before.Release()
	}
	if hooks.After != nil {
		if after, err = hook("after", hooks.After); err != nil {
			return PassInstrument{}, err
		}
		defer after.Release()
	}
	c := C.CString(name)
	defer C.free(unsafePointer(c))
	o, err := cobj("NewPassInstrument", func() *C.TnObject {
		return C.tn_pass_instrument(c, before.ptr(), after.ptr())
	})
	runtime.KeepAlive(before.r)
	runtime.KeepAlive(after.r)
	return PassInstrument{o}, err
}

// goFuncOf is the Go side of a Function made by FunctionOf (nil for any
// other function).
func goFuncOf(f Function) *goFunc {
	p := f.ptr()
	if p == nil {
		return nil
	}
	h := uintptr(C.tngo_func_handle(p))
	runtime.KeepAlive(f.r)
	if h == 0 {
		return nil
	}
	g, _ := cgo.Handle(h).Value().(*goFunc)
	return g
}

// goHooks are the hooks of a Go instrument, or nil.
func (in PassInstrument) goHooks() *InstrumentHooks {
	v, err := in.Get("before")
	if err != nil {
		return nil
	}
	f, ok := v.(Function)
	if !ok {
		return nil
	}
	defer f.Release()
	if g := goFuncOf(f); g != nil {
		return g.instrument
	}
	return nil
}

// Name is the instrument's name.
func (in PassInstrument) Name() string {
	v, _ := in.Get("name")
	s, _ := v.(string)
	return s
}

func passInfo(info Object) (PassInfo, error) {
	var pi PassInfo
	v, err := info.Get("name")
	if err != nil {
		return pi, err
	}
	pi.Name, _ = v.(string)
	if v, err = info.Get("opt_level"); err != nil {
		return pi, err
	}
	n, _ := v.(int64)
	pi.OptLevel = int32(n)
	req, err := info.GetObject("required")
	if err != nil {
		return pi, err
	}
	defer req.Release()
	pi.Required, err = Array{req}.Strings()
	return pi, err
}

// Info describes the pass.
func (p Pass) Info() (PassInfo, error) {
	info, err := p.GetObject("info")
	if err != nil {
		return PassInfo{}, err
	}
	defer info.Release()
	return passInfo(info)
}

// NewPassTimingInstrument makes a timing instrument.
func NewPassTimingInstrument() (PassTimingInstrument, error) {
	o, err := cobj("NewPassTimingInstrument", func() *C.TnObject { return C.tn_pass_timing_instrument() })
	return PassTimingInstrument{PassInstrument{o}}, err
}

// Render is the timing table of the passes timed so far: each pass's
// milliseconds and share of the total, nested passes indented.
func (t PassTimingInstrument) Render() (string, error) {
	p, err := t.live("PassTimingInstrument.Render")
	if err != nil {
		return "", err
	}
	o, err := cobj("PassTimingInstrument.Render", func() *C.TnObject { return C.tn_pass_timing_report(p) })
	runtime.KeepAlive(t.r)
	return stringOf(o, err)
}

// ConfigType is the value type of a config option.
type ConfigType int32

// The value types a config option may declare.
const (
	ConfigInt    = ConfigType(C.TN_TYPE_INT)
	ConfigFloat  = ConfigType(C.TN_TYPE_FLOAT) // an int is accepted too
	ConfigBool   = ConfigType(C.TN_TYPE_BOOL)
	ConfigString = ConfigType(C.TN_TYPE_STRING)
)

// RegisterPassConfig declares a config option that contexts accept, and
// the type of its value (visible to every language; declaring again
// replaces the type).
func RegisterPassConfig(key string, t ConfigType) error {
	c := C.CString(key)
	defer C.free(unsafe.Pointer(c))
	return crc("RegisterPassConfig", func() C.int { return C.tn_pass_config_register(c, C.int32_t(t)) })
}
