// Workspace shipping over SSH, for npm run bench: numbers, never assertions. A large generated git repo
// (BENCH_REPO_FILES files, ~10 kB of code-like text each, deterministic) goes to a real sshd on loopback
// (test/helpers/sshd-server.mjs) through the built dist/ modules: the first ship to an empty host, then
// BENCH_SYNC_RUNS rounds of a one-file change shipped uncommitted (overlay), the same change committed
// (incremental bundle), and a one-file change on the host brought back.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startSshd } from '../test/helpers/sshd-server.mjs'
import { seededRandom } from './seeded-random.mjs'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const FILES = Number(process.env.BENCH_REPO_FILES ?? 4000)
const RUNS = Number(process.env.BENCH_SYNC_RUNS ?? 5)
/** Average bytes per generated file: 4000 files ≈ 40 MB. */
const AVERAGE_FILE_BYTES = 10_000

/** 12.4 MB, 1.2 kB, 830 B (decimal units). */
export function formatBytes(bytes) {
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`
  return `${bytes} B`
}

/** Writes FILES files of code-like lines and prose (Zipf-ish word choice, so git compresses them realistically). */
function generateRepo(dir, files, random) {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ne',
    'ru',
    'sa',
    'ti',
    'vo',
    'ex',
    'an',
    'or',
    'ul',
    'pre',
    'con',
    'str',
  ]
  const vocabulary = Array.from({ length: 3000 }, () => {
    let word = ''
    for (let count = 1 + Math.floor(random() * 3); count > 0; count--)
      word += syllables[Math.floor(random() * syllables.length)]
    return word
  })
  const word = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)]
  const camel = () => word() + word().replace(/^./, (letter) => letter.toUpperCase())
  const words = (count) => Array.from({ length: count }, word).join(' ')
  const line = (indent) => {
    const pad = '  '.repeat(indent)
    const kind = random()
    if (kind < 0.25) return `${pad}const ${camel()} = ${camel()}(${word()}, ${Math.floor(random() * 1000)})`
    if (kind < 0.4) return `${pad}if (${camel()}.${word()} !== ${camel()}) return ${word()}`
    if (kind < 0.55) return `${pad}// ${words(4 + Math.floor(random() * 10))}`
    if (kind < 0.65) return `${pad}export function ${camel()}(${word()}: string, ${word()}: number) {`
    if (kind < 0.75) return `${pad}${camel()}.${word()}('${words(2 + Math.floor(random() * 4))}')`
    if (kind < 0.85) return `${pad}}`
    return ''
  }
  // 40 packages of 5 folders each (few directories: du counts each one as a block).
  const folders = Array.from({ length: 40 }, (_, top) => {
    const outer = `${word()}-${top}`
    return Array.from({ length: 5 }, (_, inner) => `src/${outer}/${word()}-${inner}`)
  })
  const names = []
  for (let index = 0; index < files; index++) {
    const name = `${folders[index % 40][Math.floor(index / 40) % 5]}/${camel()}-${index}.ts`
    const target = AVERAGE_FILE_BYTES * (0.25 + 1.5 * random())
    const lines = []
    let size = 0
    while (size < target) {
      const next = line(Math.floor(random() * 4))
      lines.push(next)
      size += next.length + 1
    }
    mkdirSync(path.join(dir, path.dirname(name)), { recursive: true })
    writeFileSync(path.join(dir, name), `${lines.join('\n')}\n`)
    names.push(name)
  }
  return names
}

/** Inserts a line in the middle of a file: a typical one-file edit. */
function editFile(file, text) {
  const content = readFileSync(file, 'utf8')
  const middle = content.indexOf('\n', Math.floor(content.length / 2)) + 1
  writeFileSync(file, `${content.slice(0, middle)}${text}\n${content.slice(middle)}`)
}

const duBytes = (...args) => Number(execFileSync('du', ['-sb', ...args], { encoding: 'utf8' }).split('\t')[0])

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.ceil(sorted.length / 2) - 1]
}

async function timed(work) {
  const started = performance.now()
  const result = await work()
  return { result, ms: performance.now() - started }
}

export async function benchWorkspaceSync() {
  const { createSshConnection } = await import(path.join(root, 'dist/src/workspaces/ssh/ssh-connection.js'))
  const { shipWorkspace, syncBack } = await import(
    path.join(root, 'dist/src/workspaces/ssh/workspace-sync.js')
  )
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-sync-'))
  let sshd
  let connection
  try {
    const repo = path.join(scratch, 'repo')
    mkdirSync(repo)
    const git = (...args) =>
      execFileSync(
        'git',
        [
          '-c',
          'user.email=bench@example.com',
          '-c',
          'user.name=bench',
          '-c',
          'commit.gpgsign=false',
          ...args,
        ],
        { cwd: repo, encoding: 'utf8' },
      )
    git('init', '-q', '-b', 'main')
    // No background auto-gc in the middle of a timed step; the repository is packed once, below.
    git('config', 'gc.auto', '0')
    git('config', 'maintenance.auto', 'false')
    const random = seededRandom(0x4a4e)
    const files = generateRepo(repo, FILES, random)
    git('add', '-A')
    git('commit', '-qm', 'generated')
    // A real repository's objects are packed.
    git('gc', '-q')
    const treeBytes = duBytes('--exclude=.git', repo)
    const gitBytes = duBytes(path.join(repo, '.git'))

    sshd = await startSshd()
    connection = createSshConnection(
      {
        name: 'bench',
        ssh: `${sshd.user}@127.0.0.1`,
        dir: path.join(scratch, 'host'),
        port: sshd.port,
        identityFile: sshd.identityFile,
      },
      { HANGAR_SSH_COMMAND: sshd.sshCommand },
    )

    // Cold host: nothing under its dir, no master connection yet.
    const first = await timed(() => shipWorkspace(connection, repo, {}))
    const samples = { uncommitted: [], committed: [], back: [] }
    let last = {}
    for (let run = 0; run < RUNS; run++) {
      const local = files[(run * 997 + 13) % files.length]
      editFile(path.join(repo, local), `// bench edit ${run}: ${local}`)
      const uncommitted = await timed(() => shipWorkspace(connection, repo, {}))
      git('commit', '-qam', `bench edit ${run}`)
      const committed = await timed(() => shipWorkspace(connection, repo, {}))
      const { shipped } = committed.result
      const remote = files[(run * 991 + 501) % files.length]
      editFile(path.join(shipped.remoteDir, remote), `// host edit ${run}: ${remote}`)
      const back = await timed(() => syncBack(connection, shipped))
      // The host's edit came back uncommitted; drop it so the next round starts from a clean HEAD.
      git('checkout', '-q', '--', remote)
      samples.uncommitted.push(uncommitted.ms)
      samples.committed.push(committed.ms)
      samples.back.push(back.ms)
      last = { uncommitted: uncommitted.result.stats, committed: committed.result.stats, back: back.result }
    }
    const summarise = (name) => ({ ...last[name], p50Ms: median(samples[name]), samplesMs: samples[name] })
    return {
      files: FILES,
      treeBytes,
      gitBytes,
      runs: RUNS,
      first: { ...first.result.stats, ms: first.ms },
      uncommitted: summarise('uncommitted'),
      committed: summarise('committed'),
      back: summarise('back'),
    }
  } finally {
    await connection?.close()
    await sshd?.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}
