package e2e

import (
	"debug/elf"
	"runtime"
	"strings"
	"testing"
)

// TestBinaryLeavesOutUnusedMethods: the kapi binary, built as README.md
// says, has none of the code that makes Go's linker keep every exported
// method of every type. text/template looks methods up by name while it
// executes, so once its executor is linked the linker can drop no method
// anyone might name; golang.org/x/net/trace (gRPC's request tracing,
// left out by the grpcnotrace tag) links it for its debug pages. With it
// the binary was 175 MB instead of 138. A new dependency that executes
// templates fails this test: weigh it, or keep its templates out.
func TestBinaryLeavesOutUnusedMethods(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the binary as ELF")
	}
	f, err := elf.Open(kapiBinary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	symbols, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range symbols {
		if s.Name == "text/template.(*state).evalField" || strings.HasPrefix(s.Name, "golang.org/x/net/trace.") {
			t.Errorf("the binary links %s", s.Name)
			return
		}
	}
}
