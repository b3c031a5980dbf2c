#!/usr/bin/env node
// The entry point checks the Node.js version before importing the CLI: on an older Node the CLI's own
// imports could fail first, with an error that says nothing about the version.
import { unsupportedNodeMessage } from '../core/node-version.js'

const unsupported = unsupportedNodeMessage(process.versions.node)
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`)
  process.exit(1)
}
await import('./hangar-main.js')
