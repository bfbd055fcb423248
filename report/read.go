package report

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/ndfq/ndfq/verdict"
)

// ReadVerdict reads report.md's verdict (its title line) and the reasons
// it gives for a verdict that is not GO (the bullets of "Why HOLD" and
// "Not every claim was asked").
func ReadVerdict(path string) (verdict.Outcome, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	var outcome verdict.Outcome
	var reasons []string
	inReasons := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case outcome == "":
			i := strings.LastIndex(line, " — ")
			if !strings.HasPrefix(line, "# ndfq report: ") || i < 0 {
				return "", nil, fmt.Errorf("%s: first line %q is not report.md's title", path, line)
			}
			outcome = verdict.Outcome(line[i+len(" — "):])
		case line == whyHoldHeading || line == incompleteHeading:
			inReasons = true
		case strings.HasPrefix(line, "## "):
			inReasons = false
		case inReasons && strings.HasPrefix(line, "- "):
			reasons = append(reasons, strings.TrimPrefix(line, "- "))
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	switch outcome {
	case GO, HOLD, INCOMPLETE:
		return outcome, reasons, nil
	}
	return "", nil, fmt.Errorf("%s: no verdict in its title", path)
}
