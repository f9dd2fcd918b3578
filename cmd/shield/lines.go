package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader reads newline-separated lines of at most max bytes. A longer line is skipped up to
// its newline and reported as too long, so one bad line never hides the lines after it; memory
// stays bounded by max whatever the input.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. tooLong reports a line over max (its content
// is not returned). err is io.EOF after the last line.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		frag, err := lr.r.ReadSlice('\n')
		if !tooLong {
			if len(lr.buf)+len(frag) > lr.max+1 { // +1: the newline is not part of the line
				tooLong = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, frag...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(lr.buf, []byte("\n")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(lr.buf) == 0 && !tooLong {
				return nil, false, io.EOF
			}
			if tooLong {
				lr.buf = lr.buf[:0]
			}
			return lr.buf, tooLong, nil
		default:
			return nil, false, err
		}
	}
}
