//go:build armbe || arm64be || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || sparc || sparc64

package tvmnode

// The binding reads C's TnAny payload as little-endian bytes (value.go).
var _ = bigEndianTargetsAreNotSupported
