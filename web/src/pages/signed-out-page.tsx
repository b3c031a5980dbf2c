// Not signed in (or the session ended): how to get a sign-in link.
export function SignedOutPage() {
  return (
    <main className="signed-out">
      <img src="/icon.svg" alt="" width={56} height={56} />
      <h1>Sign in to Hangar</h1>
      <p>Hangar signs you in with a one-time link. In a terminal on the machine that runs the daemon, run</p>
      <pre>hangar login</pre>
      <p>
        and open the link it prints. (The link <code>hangar up</code> printed at start works once, for 15
        minutes.)
      </p>
    </main>
  )
}
