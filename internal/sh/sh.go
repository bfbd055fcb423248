// Package sh runs host commands through kind's exec package and returns
// errors that carry the command and the tail of what it printed.
package sh

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// Output runs a command and returns its stdout; on failure the error names
// the command and ends with the last lines of its stderr and stdout.
func Output(ctx context.Context, name string, args ...string) ([]byte, error) {
	return OutputWithStdin(ctx, nil, name, args...)
}

// OutputWithStdin is Output with stdin connected to r.
func OutputWithStdin(ctx context.Context, r io.Reader, name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := kindexec.CommandContext(ctx, name, args...).SetStdout(&stdout).SetStderr(&stderr)
	if r != nil {
		cmd.SetStdin(r)
	}
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s: %w: %s", kindexec.PrettyCommand(name, args...), cause(err), Tail(stderr.String()+stdout.String(), 1500))
	}
	return stdout.Bytes(), nil
}

// Run is Output without the stdout.
func Run(ctx context.Context, name string, args ...string) error {
	_, err := Output(ctx, name, args...)
	return err
}

func cause(err error) error {
	if re := kindexec.RunErrorForError(err); re != nil && re.Inner != nil {
		return re.Inner
	}
	return err
}

// Tail keeps the last n bytes of s, trimmed.
func Tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
