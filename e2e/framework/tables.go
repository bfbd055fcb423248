package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// WriteBenchTable writes rows (a slice of structs) as name.json and
// name.md, a markdown table whose columns are the fields' JSON names,
// into the run's artifacts folder: make bench's output.
func (e *Env) WriteBenchTable(name string, rows any) {
	GinkgoHelper()
	data, err := json.MarshalIndent(rows, "", "  ")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(e.Settings.Artifacts, 0o755)).To(Succeed())
	base := filepath.Join(e.Settings.Artifacts, name)
	Expect(os.WriteFile(base+".json", data, 0o644)).To(Succeed())
	Expect(os.WriteFile(base+".md", []byte(markdownTable(rows)), 0o644)).To(Succeed())
}

// markdownTable renders a slice of structs, one row each; a nil pointer
// is an empty cell.
func markdownTable(rows any) string {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice || v.Len() == 0 {
		return "(no rows)\n"
	}
	typ := v.Index(0).Type()
	var head []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" {
			name = typ.Field(i).Name
		}
		head = append(head, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for r := range v.Len() {
		var cells []string
		for i := range typ.NumField() {
			f := v.Index(r).Field(i)
			switch {
			case f.Kind() == reflect.Pointer && f.IsNil():
				cells = append(cells, "")
			default:
				if f.Kind() == reflect.Pointer {
					f = f.Elem()
				}
				format := "%v"
				if f.Kind() == reflect.Float64 {
					format = "%.3g"
				}
				cells = append(cells, fmt.Sprintf(format, f.Interface()))
			}
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	return b.String()
}
