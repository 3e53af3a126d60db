package handlers

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// A gzip response is written here as the gzip format (RFC 1952) around
// deflate runs compressed one after another, each from a fresh compressor:
// a run refers back only to its own bytes and ends on a byte boundary, so
// the runs of one response can be compressed separately, and a run kept
// from an earlier response (a list's items, see listSegments) sent again
// as it is. The trailer's checksum of the whole is combined from each
// run's own.

// gzipHeader starts a member without a name, a time or extra fields,
// compressed by the fastest method (XFL 4), from an unknown system.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff}

// gzipWriter writes one gzip member to w.
type gzipWriter struct {
	w    io.Writer
	crc  uint32
	size uint32 // the uncompressed length, modulo 2^32 as the trailer has it
	err  error
}

func newGzipWriter(w io.Writer) *gzipWriter {
	g := &gzipWriter{w: w}
	_, g.err = w.Write(gzipHeader)
	return g
}

// deflate compresses parts as a run of their own. The last run of a member
// is final; the others end with a sync flush. When keep is not nil the
// compressed bytes are written to it too.
func (g *gzipWriter) deflate(parts [][]byte, last bool, keep io.Writer) deflated {
	var run deflated
	if g.err != nil {
		return run
	}
	dst := g.w
	if keep != nil {
		dst = io.MultiWriter(g.w, keep)
	}
	fw := flateWriters.Get().(*flate.Writer)
	fw.Reset(dst)
	for _, p := range parts {
		if _, g.err = fw.Write(p); g.err != nil {
			break
		}
		run.crc = crc32.Update(run.crc, crc32.IEEETable, p)
		run.size += len(p)
	}
	if g.err == nil {
		if last {
			g.err = fw.Close()
		} else {
			g.err = fw.Flush()
		}
	}
	fw.Reset(nil)
	flateWriters.Put(fw)
	g.account(run)
	return run
}

// deflated describes a run's uncompressed bytes.
type deflated struct {
	crc  uint32
	size int
}

// raw writes a run compressed before (and not final) as it is.
func (g *gzipWriter) raw(data []byte, run deflated) {
	if g.err != nil {
		return
	}
	_, g.err = g.w.Write(data)
	g.account(run)
}

func (g *gzipWriter) account(run deflated) {
	g.crc = crc32Combine(g.crc, run.crc, run.size)
	g.size += uint32(run.size)
}

// close writes the trailer, after a last run.
func (g *gzipWriter) close() error {
	if g.err != nil {
		return g.err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], g.crc)
	binary.LittleEndian.PutUint32(trailer[4:], g.size)
	_, g.err = g.w.Write(trailer[:])
	return g.err
}

// flateWriters are reused: a compressor holds some hundreds of KB of
// tables.
var flateWriters = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(nil, gzipLevel)
	return fw
}}

// crc32Combine returns the IEEE CRC-32 of a followed by b from the CRC-32
// of each and the length of b. Appending n bytes multiplies a's remainder
// by x^(8n) modulo the polynomial before b's adds in (the initial and
// final inversions cancel out across the two); the power is built by
// squaring, in the reflected bit order the table-driven CRC uses.
func crc32Combine(a, b uint32, n int) uint32 {
	if n == 0 {
		return a
	}
	power := uint32(1) << 31  // x^0
	square := uint32(1) << 23 // x^8: one byte
	for k := uint64(n); k > 0; k >>= 1 {
		if k&1 != 0 {
			power = multiplyModCRC(power, square)
		}
		square = multiplyModCRC(square, square)
	}
	return multiplyModCRC(power, a) ^ b
}

// multiplyModCRC multiplies two polynomials in reflected order (x^0 in the
// top bit) modulo the CRC-32 polynomial.
func multiplyModCRC(a, b uint32) uint32 {
	var product uint32
	for bit := uint32(1) << 31; bit != 0; bit >>= 1 {
		if a&bit != 0 {
			product ^= b
		}
		// b times x: shift toward the low end, reducing what falls off.
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return product
}
