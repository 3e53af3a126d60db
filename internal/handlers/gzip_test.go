package handlers

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
)

func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, split := range []int{0, 1, 7, 64, 1000, 4999, 5000} {
		a, b := data[:split], data[split:]
		got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), len(b))
		if want := crc32.ChecksumIEEE(data); got != want {
			t.Errorf("split at %d: combined %08x, want %08x", split, got, want)
		}
	}
}

// TestGzipOfSeparateRuns checks that runs compressed separately, one of
// them kept and sent again in another member, read back as the bytes they
// were made from, through the standard library's reader.
func TestGzipOfSeparateRuns(t *testing.T) {
	items := [][]byte{bytes.Repeat([]byte(`{"name":"a","value":1},`), 5000), []byte(`{"name":"last"}`)}
	var first, kept bytes.Buffer
	g := newGzipWriter(&first)
	g.deflate([][]byte{[]byte(`{"items":[`)}, false, nil)
	run := g.deflate(items, false, &kept)
	g.deflate([][]byte{[]byte(`]}`)}, true, nil)
	if err := g.close(); err != nil {
		t.Fatal(err)
	}
	want := `{"items":[` + string(bytes.Join(items, nil)) + `]}`
	if got := gunzip(t, first.Bytes()); got != want {
		t.Fatalf("first member reads back as %d bytes, want %d", len(got), len(want))
	}

	var second bytes.Buffer
	g = newGzipWriter(&second)
	g.deflate([][]byte{[]byte(`{"metadata":{"resourceVersion":"9"},"items":[`)}, false, nil)
	g.raw(kept.Bytes(), run)
	g.deflate([][]byte{[]byte(`]}`)}, true, nil)
	if err := g.close(); err != nil {
		t.Fatal(err)
	}
	want = `{"metadata":{"resourceVersion":"9"},"items":[` + string(bytes.Join(items, nil)) + `]}`
	if got := gunzip(t, second.Bytes()); got != want {
		t.Fatalf("member with a kept run reads back as %d bytes, want %d", len(got), len(want))
	}
	if kept.Len() > len(want)/10 {
		t.Errorf("the kept run is %d bytes for %d repetitive ones", kept.Len(), len(want))
	}
}

// gunzip reads one gzip member, checking its checksum and length.
func gunzip(t *testing.T, data []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	return string(out)
}
