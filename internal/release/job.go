package release

import (
	"bytes"
	"fmt"
)

// JobTemplateImage is the image config/job/probe-job.yaml names: the
// placeholder a release replaces by its image's digest.
const JobTemplateImage = "ndfq.local/ndfq:latest"

// JobManifest is config/job/probe-job.yaml running ref (repo@sha256:...).
func JobManifest(template []byte, ref, version string) ([]byte, error) {
	line := []byte("image: " + JobTemplateImage + "\n")
	if n := bytes.Count(template, line); n != 1 {
		return nil, fmt.Errorf("the Job template names %q %d times, want once", JobTemplateImage, n)
	}
	head := fmt.Sprintf("# ndfq %s: the probe Job with the released image by digest.\n", version)
	out := bytes.Replace(template, line, []byte("image: "+ref+"\n"), 1)
	return append([]byte(head), out...), nil
}
