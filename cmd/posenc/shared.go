package main

import (
	"flag"

	"github.com/posenc/posenc/internal/cli"
)

// The helpers posenc shares with posenc-plot (package internal/cli), under
// the names the subcommands use.
var (
	errUsage    = cli.ErrUsage
	moduleRoot  = cli.ModuleRoot
	scratchDir  = cli.ScratchDir
	removeAll   = cli.RemoveAll
	goCmd       = cli.GoCmd
	runCapture  = cli.RunCapture
	tail        = cli.Tail
	mustRel     = cli.Rel
	loadSpecs   = cli.LoadSpecs
	loadOne     = cli.LoadOne
	loadFile    = cli.LoadFile
	generateAll = cli.GenerateAll
)

// multiFlag collects a repeatable string flag.
type multiFlag = cli.MultiFlag

// parseFlags parses args, flags and positional arguments in any order,
// turning flag errors into errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error { return cli.Parse(fs, args) }
