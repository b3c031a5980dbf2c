// Loads one API resource for a component: its data, its error, and reload() for after a change or an event.
// A newer load always wins over an older one that answers late.
import { useCallback, useEffect, useRef, useState } from 'react'
import { api } from './api'

export interface Resource<T> {
  data: T | undefined
  error: unknown
  loading: boolean
  reload: () => Promise<void>
}

export function useResource<T>(path: string | null): Resource<T> {
  const [data, setData] = useState<T>()
  const [error, setError] = useState<unknown>()
  const [loading, setLoading] = useState(path !== null)
  const latest = useRef(0)

  const reload = useCallback(async () => {
    if (path === null) return
    const ticket = ++latest.current
    setLoading(true)
    try {
      const value = await api<T>('GET', path)
      if (ticket !== latest.current) return
      setData(value)
      setError(undefined)
    } catch (caught) {
      if (ticket === latest.current) setError(caught)
    } finally {
      if (ticket === latest.current) setLoading(false)
    }
  }, [path])

  useEffect(() => {
    setData(undefined)
    void reload()
  }, [reload])

  return { data, error, loading, reload }
}
