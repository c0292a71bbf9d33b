// Package schematest validates JSON against bloop's published schemas
// (package schema) with github.com/santhosh-tekuri/jsonschema. It is for
// tests only: importing it from non-test code would link the validator
// into bloop (cmd/bloop's TestValidatorNotLinked checks that it is not).
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"bloop/schema"
)

var (
	once     sync.Once
	compiled map[string]*jsonschema.Schema
	errSetup error
)

// load compiles every schema file once; they may refer to one another
// by $id.
func load() {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, name := range schema.Names() {
		data, _ := schema.Bytes(name)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			errSetup = fmt.Errorf("schema %s: %w", name, err)
			return
		}
		if err := c.AddResource(schema.BaseURL+name, doc); err != nil {
			errSetup = fmt.Errorf("schema %s: %w", name, err)
			return
		}
	}
	compiled = map[string]*jsonschema.Schema{}
	for _, name := range schema.Names() {
		s, err := c.Compile(schema.BaseURL + name)
		if err != nil {
			errSetup = fmt.Errorf("schema %s: %w", name, err)
			return
		}
		compiled[name] = s
	}
}

// Compile returns the compiled schema of file name (schema.Structure, ...).
func Compile(name string) (*jsonschema.Schema, error) {
	once.Do(load)
	if errSetup != nil {
		return nil, errSetup
	}
	s, ok := compiled[name]
	if !ok {
		return nil, fmt.Errorf("no schema %q (have %v)", name, schema.Names())
	}
	return s, nil
}

// ValidateJSON validates one JSON document against schema file name.
func ValidateJSON(name string, data []byte) error {
	s, err := Compile(name)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value (a JSON Lines file? see ValidateLines)")
	}
	return s.Validate(v)
}

// Validate validates v against schema file name: v is JSON ([]byte,
// json.RawMessage) or any value encoding/json marshals (a record struct,
// a map), which is validated as the JSON it marshals to.
func Validate(name string, v any) error {
	switch x := v.(type) {
	case []byte:
		return ValidateJSON(name, x)
	case json.RawMessage:
		return ValidateJSON(name, x)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return ValidateJSON(name, data)
}

// ValidateLines validates each non-blank line of a JSON Lines document
// (a manifest) against schema file name; the error names the line.
func ValidateLines(name string, data []byte) error {
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := ValidateJSON(name, line); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return nil
}
