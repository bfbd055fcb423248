package verdict

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ProbeSchema is the JSON schema of `ndfq probe --output json`.
//
//go:embed probe.schema.json
var ProbeSchema []byte

// ValidateProbeJSON checks a probe report against ProbeSchema.
func ValidateProbeJSON(doc []byte) error {
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ProbeSchema))
	if err != nil {
		return fmt.Errorf("probe.schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("probe.schema.json", schemaDoc); err != nil {
		return err
	}
	sch, err := c.Compile("probe.schema.json")
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("probe report is not JSON: %w", err)
	}
	return sch.Validate(inst)
}
