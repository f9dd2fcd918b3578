package policy

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// readTarGz reads a gzip-compressed tar archive within the bounds of opt. Only regular files
// and directories are accepted; links, devices and FIFOs are errors.
func readTarGz(p string, opt LoadOptions) (map[string][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTarGz(f, opt)
}

// ReadTarGz reads bundle files from a gzip-compressed tar stream within the bounds of opt.
func ReadTarGz(r io.Reader, opt LoadOptions) (map[string][]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	c := newCollector(opt)
	// Headers of empty entries cost nothing in content: bound them too.
	entries := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		entries++
		if entries > 4*opt.maxFiles() {
			return nil, fmt.Errorf("%w: more than %d archive entries", ErrTooLarge, 4*opt.maxFiles())
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if _, err := cleanName(h.Name); err != nil && h.Name != "./" && h.Name != "." {
				return nil, err
			}
			continue
		case tar.TypeReg:
		case tar.TypeXGlobalHeader:
			continue
		default:
			return nil, fmt.Errorf("%w: %s is not a regular file (type %q)", ErrUnsafePath, h.Name, h.Typeflag)
		}
		name, err := cleanName(h.Name)
		if err != nil {
			return nil, err
		}
		if err := c.checkSize(name, h.Size); err != nil {
			return nil, err
		}
		data, err := readBounded(tr, opt.maxFileSize(), name)
		if err != nil {
			return nil, err
		}
		if err := c.add(name, data); err != nil {
			return nil, err
		}
	}
	return c.files, nil
}

// readBounded reads all of r, failing when it holds more than max bytes.
func readBounded(r io.Reader, max int64, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s is more than %d bytes", ErrTooLarge, name, max)
	}
	return data, nil
}
