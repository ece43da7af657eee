"""pytorch/examples reinforcement_learning (reinforce.py and
actor_critic.py), re-expressed on onemodel by changing the imports: the
policies (Linear, Dropout, softmax; the actor-critic's two heads),
select_action with distributions.Categorical (sample, log_prob), the
discounted returns through a deque given to torch.tensor, their
normalisation with the float32 eps, the REINFORCE loss torch.cat(...).sum()
and the actor-critic loss with smooth_l1_loss against torch.tensor([R])
of a 0-d tensor, Adam. gym's CartPole is replaced by a deterministic
NumPy toy environment with CartPole's interface (reset/step, 4-d state,
2 actions); episodes are short."""

from collections import deque, namedtuple
from itertools import count

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.nn.functional as F
import onemodel.optim as optim
from onemodel.distributions import Categorical


class ToyCartPole:
    """A deterministic 4-d state, 2 actions, reward 1 per step."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.state = None

    def reset(self, seed=None):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        self.t = 0
        return self.state, {}

    def step(self, action):
        x, v, th, w = self.state
        force = 1.0 if action == 1 else -1.0
        w = w + 0.05 * (9.8 * np.sin(th) - force * np.cos(th))
        th = th + 0.02 * w
        v = v + 0.02 * force
        x = x + 0.02 * v
        self.state = np.array([x, v, th, w])
        self.t += 1
        terminated = bool(abs(th) > 0.2 or self.t >= 12)
        return self.state, 1.0, terminated, False, {}


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)

        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class ActorCritic(nn.Module):
    def __init__(self):
        super(ActorCritic, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.action_head = nn.Linear(128, 2)
        self.value_head = nn.Linear(128, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


eps = np.finfo(np.float32).eps.item()
gamma = 0.99


def reinforce_episode(policy, optimizer, env):
    def select_action(state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    state, _ = env.reset()
    ep_reward = 0
    for t in range(1, 10000):
        action = select_action(state)
        state, reward, done, _, _ = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return ep_reward, policy_loss.item()


def actor_critic_episode(model, optimizer, env):
    def select_action(state):
        state = torch.from_numpy(state).float()
        probs, state_value = model(state)
        m = Categorical(probs)
        action = m.sample()
        model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
        return action.item()

    state, _ = env.reset()
    ep_reward = 0
    for t in count(1):
        action = select_action(state)
        state, reward, done, _, _ = env.step(action)
        model.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []
    value_losses = []
    returns = []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return ep_reward, loss.item()


def sweep_drive(run):
    torch.manual_seed(543)
    policy = Policy()
    policy.dropout.p = 0.0
    run.sync_weights("policy", policy)
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    model = ActorCritic()
    run.sync_weights("actor_critic", model)
    optimizer2 = optim.Adam(model.parameters(), lr=3e-2)
    env, env2 = ToyCartPole(0), ToyCartPole(1)
    with run.draws():
        run.result("reinforce", [reinforce_episode(policy, optimizer, env) for _ in range(2)])
        run.result("actor_critic", [actor_critic_episode(model, optimizer2, env2) for _ in range(2)])
    run.result("policy_affine2", policy.affine2.weight.detach().numpy()[:, :6])
