// A plain recursive copy for workspaces of projects outside git.
import { constants as fsConstants } from 'node:fs'
import { copyFile, mkdir, readdir, readlink, stat, symlink, utimes } from 'node:fs/promises'
import path from 'node:path'

/**
 * Copies a directory tree: files (mode and times kept), directories, and symlinks as symlinks. Written out
 * rather than fs.cp, which refuses a destination inside the source even when a filter skips it.
 */
export async function copyTree(
  from: string,
  to: string,
  include: (source: string) => boolean,
): Promise<void> {
  const info = await stat(from)
  await mkdir(to, { mode: info.mode & 0o7777 })
  const entries = await readdir(from, { withFileTypes: true })
  // A few at a time: wide directories (node_modules) copy faster, without running out of file handles.
  for (let start = 0; start < entries.length; start += 16) {
    await Promise.all(
      entries.slice(start, start + 16).map(async (entry) => {
        const source = path.join(from, entry.name)
        const destination = path.join(to, entry.name)
        if (!include(source)) return
        if (entry.isSymbolicLink()) await symlink(await readlink(source), destination)
        else if (entry.isDirectory()) await copyTree(source, destination, include)
        else if (entry.isFile()) {
          await copyFile(source, destination, fsConstants.COPYFILE_EXCL)
          const times = await stat(source)
          await utimes(destination, times.atime, times.mtime)
        }
        // Sockets, FIFOs and devices cannot be copied; the project works without them.
      }),
    )
  }
  await utimes(to, info.atime, info.mtime)
}
