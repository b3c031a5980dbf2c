// A real OpenSSH server on 127.0.0.1 for tests. The implementation is plain JS (sshd-server.mjs) so
// scripts/bench.mjs can start one too; this keeps the import path the tests use.
export { startSshd, SSHD_PATH } from './sshd-server.mjs'
export type { TestSshd } from './sshd-server.mjs'
