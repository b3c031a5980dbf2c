// Entry point: theme before first paint, the app, and the service worker (app shell only; see public/sw.js).
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './app'
import { applyTheme } from './lib/use-theme'
import './styles/base.css'
import './styles/shell.css'
import './styles/chat.css'
import './styles/pages.css'

applyTheme()
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)

if ('serviceWorker' in navigator && import.meta.env.PROD) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js').catch(() => {
      // Without a service worker the UI still works; it just cannot open offline.
    })
  })
}
