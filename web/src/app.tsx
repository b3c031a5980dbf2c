// The app shell: who is signed in, the navigation, live indicators and the page for the current path.
import { useCallback, useEffect, useState } from 'react'
import { ProjectSwitcher } from './components/project-switcher'
import { ToastProvider, useToast } from './components/toasts'
import { ActivityProvider, useActivity } from './lib/activity'
import { api, SIGNED_OUT_EVENT } from './lib/api'
import { Link, matchPath, navigate, usePath } from './lib/router'
import type { PendingAction } from './lib/types'
import { useTheme } from './lib/use-theme'
import { ProjectsProvider } from './lib/use-projects'
import { AgentsPage } from './pages/agents-page'
import { ApprovalsPage } from './pages/approvals-page'
import { AttemptPage, AttemptsPage } from './pages/attempts-page'
import { ChatPage } from './pages/chat-page'
import { ConversationsPage } from './pages/conversations-page'
import { ProjectsPage } from './pages/projects-page'
import { ReviewPage } from './pages/review-page'
import { RunPage } from './pages/run-page'
import { RunsPage } from './pages/runs-page'
import { SettingsPage } from './pages/settings-page'
import { SignedOutPage } from './pages/signed-out-page'
import { TriggersPage } from './pages/triggers-page'
import { UsagePage } from './pages/usage-page'

interface SessionInfo {
  user: { id: string; name: string; role: string }
}

const NAV = [
  { to: '/conversations', label: 'Conversations' },
  { to: '/approvals', label: 'Approvals' },
  { to: '/runs', label: 'Runs' },
  { to: '/attempts', label: 'Attempts' },
  { to: '/agents', label: 'Agents' },
  { to: '/projects', label: 'Projects' },
  { to: '/triggers', label: 'Triggers' },
  { to: '/usage', label: 'Usage' },
  { to: '/settings', label: 'Settings' },
]

function Page({ path, isOwner }: { path: string; isOwner: boolean }) {
  const review = matchPath('/conversations/:id/review', path)
  if (review) return <ReviewPage key={review.id} id={review.id!} />
  const conversation = matchPath('/conversations/:id', path)
  if (conversation) return <ChatPage key={conversation.id} id={conversation.id!} />
  const run = matchPath('/runs/:id', path)
  if (run) return <RunPage key={run.id} id={run.id!} />
  const attempts = matchPath('/attempts/:id', path)
  if (attempts) return <AttemptPage key={attempts.id} id={attempts.id!} />
  switch (path) {
    case '/':
    case '/conversations':
      return <ConversationsPage />
    case '/approvals':
      return <ApprovalsPage />
    case '/runs':
      return <RunsPage />
    case '/attempts':
      return <AttemptsPage />
    case '/agents':
      return <AgentsPage />
    case '/projects':
      return <ProjectsPage isOwner={isOwner} />
    case '/triggers':
      return <TriggersPage />
    case '/usage':
      return <UsagePage />
    case '/settings':
      return <SettingsPage />
    default:
      return (
        <div className="page">
          <h1>Not found</h1>
          <p>
            Nothing lives at <code>{path}</code>. <Link to="/conversations">Go to conversations</Link>.
          </p>
        </div>
      )
  }
}

function PendingCount() {
  const [count, setCount] = useState(0)
  const load = useCallback(() => {
    api<PendingAction[]>('GET', '/api/actions?status=pending').then(
      (actions) => setCount(actions.length),
      () => {},
    )
  }, [])
  useEffect(load, [load])
  useActivity(load)
  return count > 0 ? (
    <span className="count" aria-label={`${count} waiting`}>
      {count}
    </span>
  ) : null
}

function Shell({ session, onSignOut }: { session: SessionInfo; onSignOut: () => void }) {
  const path = usePath()
  const pageName = NAV.find((item) => path === item.to || path.startsWith(`${item.to}/`))?.label
  useEffect(() => {
    document.title = pageName ? `${pageName} · Hangar` : 'Hangar'
  }, [pageName])
  const toast = useToast()
  const { theme, cycleTheme } = useTheme()
  const current =
    NAV.find((item) => path === item.to || path.startsWith(`${item.to}/`))?.to ??
    (path === '/' ? '/conversations' : '')

  async function signOut() {
    try {
      await api('POST', '/api/logout')
      onSignOut()
    } catch (error) {
      toast.error(error)
    }
  }

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/conversations" className="brand" aria-label="Hangar home">
          <img src="/icon.svg" alt="" width={24} height={24} /> Hangar
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={current === item.to ? 'page' : undefined}>
                  {item.label}
                  {item.to === '/approvals' && <PendingCount />}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-end">
          <ProjectSwitcher />
          <button
            type="button"
            className="icon-button"
            onClick={cycleTheme}
            aria-label={`Theme: ${theme}. Change theme`}
            title={`Theme: ${theme}`}
          >
            {theme === 'dark' ? '☾' : theme === 'light' ? '☀' : '◐'}
          </button>
          <span className="muted small user-name">{session.user.name}</span>
          <button type="button" className="button ghost small-button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page path={path} isOwner={session.user.role === 'owner'} />
      </main>
    </div>
  )
}

export function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined)

  useEffect(() => {
    api<SessionInfo>('GET', '/api/session').then(setSession, () => setSession(null))
    const signedOut = () => setSession(null)
    window.addEventListener(SIGNED_OUT_EVENT, signedOut)
    return () => window.removeEventListener(SIGNED_OUT_EVENT, signedOut)
  }, [])

  useEffect(() => {
    if (session && window.location.pathname === '/') navigate('/conversations', { replace: true })
  }, [session])

  return (
    <ToastProvider>
      {session === undefined ? (
        <p className="loading" role="status">
          Loading…
        </p>
      ) : session === null ? (
        <SignedOutPage />
      ) : (
        <ActivityProvider>
          <ProjectsProvider>
            <Shell session={session} onSignOut={() => setSession(null)} />
          </ProjectsProvider>
        </ActivityProvider>
      )}
    </ToastProvider>
  )
}
