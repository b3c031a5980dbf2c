// Settings: provider credentials, the built-in agent's provider, personal access tokens, notifications
// and feeds.
import { BuiltinSettingsSection } from './builtin-settings'
import { FeedSettingsSection } from './feed-settings'
import { NotificationSettingsSection } from './notification-settings'
import { ProviderSettingsSection } from './provider-settings'
import { TokenSettingsSection } from './token-settings'

export function SettingsPage() {
  return (
    <div className="page">
      <header className="page-head">
        <h1>Settings</h1>
      </header>
      <ProviderSettingsSection />
      <BuiltinSettingsSection />
      <TokenSettingsSection />
      <NotificationSettingsSection />
      <FeedSettingsSection />
    </div>
  )
}
