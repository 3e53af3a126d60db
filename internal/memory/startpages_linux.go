package memory

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// DropStartPages hands back to the kernel the pages of the process's own
// binary (its code, read-only data and symbol tables) that it holds
// mapped, so that only those it goes on using count in its resident
// memory again, as it touches them.
//
// The start runs the init functions of every package the binary holds
// and builds schemes, OpenAPI models and admission plugins once: it
// touches most of the binary (80 of its 97 MiB of code and tables), the
// kernel's read-ahead and fault-around mapping the neighbours of every
// page it reads. A server that then serves requests uses less than half
// of them again. The pages are clean copies of the file, which the kernel
// could drop under memory pressure anyway; dropping them when the start
// is over makes the process's resident size say what it uses. A page
// needed again is read back in (from the page cache, or from the file),
// once.
//
// Kernels before 5.4 know no MADV_PAGEOUT: the pages then stay, and the
// error says so.
func DropStartPages() error {
	exe, err := os.Stat("/proc/self/exe")
	if err != nil {
		return err
	}
	st := exe.Sys().(*syscall.Stat_t)
	file := fmt.Sprintf("%02x:%02x %d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	regions, err := readOnlyMappings("/proc/self/maps", file)
	if err != nil {
		return err
	}
	for _, r := range regions {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, unix.MADV_PAGEOUT); errno != 0 {
			return fmt.Errorf("madvise(MADV_PAGEOUT) of the binary's pages: %w", errno)
		}
	}
	return nil
}

// mapping is a range of the process's addresses.
type mapping struct{ start, end uintptr }

// readOnlyMappings returns the read-only mappings of file (its device and
// inode as /proc/PID/maps writes them: "fe:00 9977964") in the listing at
// path: the binary's writable data stays.
func readOnlyMappings(path, file string) ([]mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var regions []mapping
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		// address perms offset dev inode pathname
		fields := strings.Fields(lines.Text())
		if len(fields) < 6 || strings.Contains(fields[1], "w") || fields[3]+" "+fields[4] != file {
			continue
		}
		start, end, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(start, 16, 64)
		e, err2 := strconv.ParseUint(end, 16, 64)
		if err1 != nil || err2 != nil || e <= s {
			continue
		}
		regions = append(regions, mapping{uintptr(s), uintptr(e)})
	}
	return regions, lines.Err()
}
