// Feeds per profile and how their last fetch went (fresh, stale with its reason, unavailable, never).
import { useEffect, useState } from 'react'
import { api } from '../lib/api'
import { formatWhen } from '../lib/format'
import type { FeedState, Profile } from '../lib/types'
import { useResource } from '../lib/use-resource'

const hasFeeds = (profile: Profile) => (profile.definition.feeds ?? []).length > 0

export function FeedSettingsSection() {
  const profiles = useResource<Profile[]>('/api/profiles')
  const [feeds, setFeeds] = useState<Record<string, FeedState[]>>({})
  const withFeeds = (profiles.data ?? []).filter(hasFeeds)

  useEffect(() => {
    for (const profile of (profiles.data ?? []).filter(hasFeeds)) {
      void api<{ feeds: FeedState[] }>('GET', `/api/profiles/${encodeURIComponent(profile.name)}/feeds`).then(
        (result) => setFeeds((current) => ({ ...current, [profile.name]: result.feeds })),
        () => {},
      )
    }
  }, [profiles.data])

  return (
    <section className="card" aria-labelledby="feeds-heading">
      <h2 id="feeds-heading">Feeds</h2>
      {profiles.data && withFeeds.length === 0 && (
        <p className="muted">
          No profile has feeds. Declare them under a profile's <code>feeds:</code> in hangar.yaml.
        </p>
      )}
      {withFeeds.map((profile) => (
        <div key={profile.name} className="table-wrap">
          <h3>{profile.name}</h3>
          <table className="table" aria-label={`Feeds of ${profile.name}`}>
            <thead>
              <tr>
                <th>Feed</th>
                <th>Source</th>
                <th>TTL</th>
                <th>Last fetch</th>
              </tr>
            </thead>
            <tbody>
              {(feeds[profile.name] ?? []).map((feed) => (
                <tr key={feed.name}>
                  <td>{feed.name}</td>
                  <td>
                    {feed.source} <code className="small">{feed.path}</code>
                  </td>
                  <td>{feed.ttl} s</td>
                  <td>
                    <span
                      className={`badge badge-${feed.state.status === 'fresh' ? 'good' : feed.state.status === 'never' ? 'muted' : 'warn'}`}
                    >
                      {feed.state.status}
                    </span>{' '}
                    {feed.state.lastSuccessAt && (
                      <span className="small muted">{formatWhen(feed.state.lastSuccessAt)}</span>
                    )}
                    {feed.state.reason && <div className="small bad">{feed.state.reason}</div>}
                    {feed.refused && <div className="small bad">refused: {feed.refused}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </section>
  )
}
