package verdict

import (
	"fmt"
	"html"
	"io"
	"time"
)

// WriteSVG draws, per pool, the probe and control pods' median scheduling
// decision time as two bars, and the refusals and rejections seen.
func (v Verdict) WriteSVG(w io.Writer) error {
	const rowH, left, width = 34, 150, 420
	max := time.Second
	parse := func(s *float64) time.Duration {
		if s == nil {
			return 0
		}
		return time.Duration(*s * float64(time.Second))
	}
	for _, p := range v.Pools {
		for _, d := range []time.Duration{parse(p.ProbeP50), parse(p.ControlP50)} {
			if d > max {
				max = d
			}
		}
	}
	h := 60 + rowH*len(v.Pools)
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+190, h)
	p(`<text x="10" y="20" font-size="14" font-weight="bold">ndfq probe: %s — scheduling decision p50 per pool (max %s)</text>`+"\n", v.Outcome, max.Round(time.Millisecond))
	p(`<rect x="%d" y="30" width="10" height="10" fill="#d9534f"/><text x="%d" y="39">probe pods</text><rect x="%d" y="30" width="10" height="10" fill="#5bc0de"/><text x="%d" y="39">control pods</text>`+"\n", left, left+14, left+100, left+114)
	for i, pool := range v.Pools {
		y := 50 + i*rowH
		bar := func(d time.Duration) int { return int(float64(width) * float64(d) / float64(max)) }
		p(`<text x="10" y="%d">%s</text>`+"\n", y+14, html.EscapeString(pool.Pool))
		p(`<rect x="%d" y="%d" width="%d" height="11" fill="#d9534f"><title>probe p50 %s</title></rect>`+"\n", left, y+2, bar(parse(pool.ProbeP50)), fmtSeconds(pool.ProbeP50))
		p(`<rect x="%d" y="%d" width="%d" height="11" fill="#5bc0de"><title>control p50 %s</title></rect>`+"\n", left, y+14, bar(parse(pool.ControlP50)), fmtSeconds(pool.ControlP50))
		p(`<text x="%d" y="%d">%d refused, %d rejected</text>`+"\n", left+width+10, y+14, pool.Refusals, pool.Rejections)
	}
	p("</svg>\n")
	return nil
}
