//go:build !linux

package memory

import "errors"

// DropStartPages is Linux's alone (MADV_PAGEOUT); elsewhere the binary's
// pages stay as the system maps them.
func DropStartPages() error {
	return errors.New("dropping the binary's pages needs Linux")
}
