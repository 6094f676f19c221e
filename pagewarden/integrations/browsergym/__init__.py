"""pagewarden for BrowserGym: every action an agent takes in a BrowserGym environment runs
through the guard (pagewarden's ``browsergym`` extra).

    import gymnasium as gym
    from pagewarden.integrations.browsergym import GuardedBrowserEnv

    env = GuardedBrowserEnv(gym.make("browsergym/openended", ...), policies=policies, proxy=True)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step("click('a51')")
    obs["last_action_error"]   # "ActionBlocked: … Guidance: …" when the guard stopped it

See docs/guides/browsergym.md.
"""

from pagewarden.integrations.browsergym._bridge import guarded_page
from pagewarden.integrations.browsergym._env import GuardedBrowserEnv

__all__ = ["GuardedBrowserEnv", "guarded_page"]
