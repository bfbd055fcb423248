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
	return validateJSON("probe.schema.json", ProbeSchema, doc)
}

// validateJSON checks a JSON document against a schema; its errors name
// the document's field.
func validateJSON(name string, schema, doc []byte) error {
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, schemaDoc); err != nil {
		return err
	}
	sch, err := c.Compile(name)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}
