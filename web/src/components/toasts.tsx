// Toasts: failures with the server's own message, and short confirmations. They stay until dismissed when
// they report a failure (people need time to read those), and leave by themselves otherwise.
import { createContext, type ReactNode, useCallback, useContext, useMemo, useRef, useState } from 'react'
import { errorMessage } from '../lib/api'

interface Toast {
  id: number
  kind: 'error' | 'success'
  text: string
}

interface Toaster {
  error: (error: unknown) => void
  success: (text: string) => void
}

const ToastContext = createContext<Toaster>({ error: () => {}, success: () => {} })

export function useToast(): Toaster {
  return useContext(ToastContext)
}

const SUCCESS_MS = 4000

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([])
  const nextId = useRef(1)

  const dismiss = useCallback(
    (id: number) => setToasts((current) => current.filter((toast) => toast.id !== id)),
    [],
  )
  const push = useCallback(
    (kind: Toast['kind'], text: string) => {
      const id = nextId.current++
      // The same failure twice in a row (a retry loop, a double click) is one toast.
      setToasts((current) =>
        current.some((toast) => toast.text === text) ? current : [...current.slice(-4), { id, kind, text }],
      )
      if (kind === 'success') setTimeout(() => dismiss(id), SUCCESS_MS)
    },
    [dismiss],
  )
  const toaster = useMemo<Toaster>(
    () => ({
      error: (error) => push('error', errorMessage(error)),
      success: (text) => push('success', text),
    }),
    [push],
  )

  return (
    <ToastContext.Provider value={toaster}>
      {children}
      <div className="toasts" aria-live="polite">
        {toasts.map((toast) => (
          <div
            key={toast.id}
            className={`toast toast-${toast.kind}`}
            role={toast.kind === 'error' ? 'alert' : 'status'}
          >
            <span>{toast.text}</span>
            <button
              type="button"
              className="icon-button"
              aria-label="Dismiss"
              onClick={() => dismiss(toast.id)}
            >
              ×
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  )
}
