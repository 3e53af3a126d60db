package kapitest

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// manifestFiles is path when it is a file, or the .yaml, .yml and .json
// files of the directory path.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	return files, nil
}

// eachDocument calls fn with each non-empty document of a YAML (or JSON)
// file.
func eachDocument(file string, fn func(raw []byte) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		raw, err := reader.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if err := fn(raw); err != nil {
			return err
		}
	}
}
