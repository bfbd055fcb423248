package nodeimage

import (
	"debug/elf"
	"fmt"
	"slices"
)

// ProbeImageTag is the image of ndfq itself that config/job/ runs.
const ProbeImageTag = "ndfq.local/ndfq:latest"

// WriteProbeImage writes an image archive of one static binary, as
// /ndfq with it as the entrypoint: the probe runs in a cluster as a Job
// from it. No Docker build: go-containerregistry assembles the layer, and
// kind (or `ctr images import`) loads the archive offline.
func WriteProbeImage(path, tag, bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	dynamic := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
	if err := f.Close(); err != nil {
		return err
	}
	if dynamic {
		return fmt.Errorf("%s is dynamically linked: an image without libc needs it built with CGO_ENABLED=0", bin)
	}
	spec, err := binaryImage([]string{tag}, bin, "/ndfq", []string{"/ndfq"})()
	if err != nil {
		return err
	}
	return writeImageArchive(path, spec)
}
