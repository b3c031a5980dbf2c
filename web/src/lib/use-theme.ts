// Light, dark, or the system's choice (the default), remembered in this browser.
import { useEffect, useState } from 'react'

export type Theme = 'system' | 'light' | 'dark'
const KEY = 'hangar.theme'
const ORDER: Theme[] = ['system', 'light', 'dark']

function stored(): Theme {
  const value = localStorage.getItem(KEY)
  return value === 'light' || value === 'dark' ? value : 'system'
}

export function applyTheme(theme: Theme = stored()): void {
  if (theme === 'system') document.documentElement.removeAttribute('data-theme')
  else document.documentElement.setAttribute('data-theme', theme)
}

export function useTheme() {
  const [theme, setTheme] = useState<Theme>(stored)
  useEffect(() => {
    applyTheme(theme)
    if (theme === 'system') localStorage.removeItem(KEY)
    else localStorage.setItem(KEY, theme)
  }, [theme])
  return {
    theme,
    cycleTheme: () => setTheme((current) => ORDER[(ORDER.indexOf(current) + 1) % ORDER.length]!),
  }
}
