package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// progress reports the steps of a long command (verify, bench) on stderr.
// On a terminal it keeps a single status line, rewritten in place ("\r" and
// clear to end of line): "posenc [k/N] what runs now  12s", its clock
// refreshed every second; Printf lines (warnings, failures) are printed
// above it and stay. Anywhere else (a pipe, a file, CI logs, NO_COLOR or
// TERM=dumb) every step is one plain line "posenc: what runs now". stdout
// is never touched, so the final table stays as it is.
type progress struct {
	w     io.Writer
	tty   bool // render the status line (false: plain lines)
	width int  // terminal columns; the status line is cut to width−1 (0: no limit)
	total int  // N, the number of steps
	start time.Time

	mu    sync.Mutex
	step  int    // k, the current step (0 before the first)
	what  string // the current step's text
	shown bool   // a status line is on the terminal
	stop  chan struct{}
	ended sync.WaitGroup
}

// newProgress returns a progress of total steps writing to w: the status
// line when w is a terminal (see interactive), plain lines otherwise.
func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		p.width, p.tty = interactive(f)
	}
	if p.tty {
		p.tick(time.Second)
	}
	return p
}

// interactive reports whether f is a terminal that gets the status line,
// and its width: not with NO_COLOR set (https://no-color.org) or TERM=dumb,
// whose users asked for plain output.
func interactive(f *os.File) (width int, ok bool) {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return 0, false
	}
	return terminalWidth(f.Fd())
}

// tick redraws the status line every interval until Done, so the elapsed
// time moves during a long step.
func (p *progress) tick(interval time.Duration) {
	p.stop = make(chan struct{})
	p.ended.Add(1)
	go func() {
		defer p.ended.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				if p.shown {
					p.draw()
				}
				p.mu.Unlock()
			}
		}
	}()
}

// Step starts the next step, described by format and args.
func (p *progress) Step(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step++
	p.what = strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	if !p.tty {
		fmt.Fprintf(p.w, "posenc: %s\n", p.what)
		return
	}
	p.draw()
}

// Printf writes a line that stays (a warning, a failure's detail): plain,
// or on a terminal above the status line, which is drawn again below it.
func (p *progress) Printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := "posenc: " + strings.TrimSuffix(fmt.Sprintf(format, args...), "\n") + "\n"
	if !p.tty {
		io.WriteString(p.w, line)
		return
	}
	p.clear()
	io.WriteString(p.w, line)
	if p.step > 0 {
		p.draw()
	}
}

// Done stops the clock and clears the status line. The progress must not
// be used afterwards.
func (p *progress) Done() {
	if p.stop != nil {
		close(p.stop)
		p.ended.Wait()
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

// status is the status line's text; the step's description is cut (…) so
// the line fits in width−1 columns and never wraps.
func (p *progress) status() string {
	head := fmt.Sprintf("posenc [%d/%d] ", p.step, p.total)
	tail := "  " + elapsed(time.Since(p.start))
	what := p.what
	if room := p.width - 1 - utf8.RuneCountInString(head+tail); p.width > 0 && utf8.RuneCountInString(what) > room {
		r := []rune(what)
		what = ""
		if room > 1 {
			what = string(r[:room-1]) + "…"
		}
	}
	return head + what + tail
}

// draw rewrites the status line. p.mu must be held.
func (p *progress) draw() {
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.status())
	p.shown = true
}

// clear erases the status line. p.mu must be held.
func (p *progress) clear() {
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// elapsed formats a duration for the status line: 7s, 1m05s, 1h02m03s.
func elapsed(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}
