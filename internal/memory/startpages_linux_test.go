package memory

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestReadOnlyMappingsOfTheBinary(t *testing.T) {
	maps := strings.Join([]string{
		"00400000-00402000 r--p 00000000 fe:00 9977964                            /tmp/kapi",
		"00402000-030c1000 r-xp 00002000 fe:00 9977964                            /tmp/kapi",
		"06446000-06536000 rw-p 06045000 fe:00 9977964                            /tmp/kapi",
		"06536000-06600000 r--p 00000000 fe:01 9977964                            /other/device",
		"7f0000000000-7f0000001000 r--p 00000000 fe:00 12                         /usr/lib/other",
		"7f0000002000-7f0000003000 rw-p 00000000 00:00 0 ",
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]",
	}, "\n")
	path := filepath.Join(t.TempDir(), "maps")
	if err := os.WriteFile(path, []byte(maps), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readOnlyMappings(path, "fe:00 9977964")
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{{0x400000, 0x402000}, {0x402000, 0x30c1000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %x, want %x", got, want)
	}
}

func TestDropStartPagesLowersTheResidentFilePages(t *testing.T) {
	before := residentFileKB(t)
	if err := DropStartPages(); err != nil {
		t.Skipf("this kernel cannot: %v", err)
	}
	after := residentFileKB(t)
	if after >= before {
		t.Errorf("resident file pages %d kB before, %d kB after", before, after)
	}
	// What was dropped comes back as it is used: this code runs, and a
	// stack trace reads the symbol tables.
	if !strings.Contains(string(debug.Stack()), "TestDropStartPagesLowersTheResidentFilePages") {
		t.Fatal("the stack trace lost its symbols")
	}
}

// residentFileKB is the process's RssFile from /proc/self/status.
func residentFileKB(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if value, ok := strings.CutPrefix(lines.Text(), "RssFile:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
