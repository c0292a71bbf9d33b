// Package structure is the home of the structure-file format (hpcstruct's
// XML, format 4.9, and bloop's JSON form of the same tree): the scope model
// (load module > file > procedure > alien/loop > statement), the address
// ranges its v attributes hold, the XML and JSON writers, the validating
// reader, the canonical form HPCToolkit's own tests compare, and the one
// interpretation of a scope tree (Interpret: inline pairs, guards, lone
// aliens) that every consumer uses, whether the tree was built by the
// pipeline or read from a file.
//
// It is a leaf: it knows nothing of ELF, DWARF or the pipeline, so the
// loader and the DWARF reader share its Range.
package structure
