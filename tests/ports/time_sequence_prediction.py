"""pytorch/examples time_sequence_prediction (generate_sine_wave.py and
train.py), re-expressed on onemodel by changing the imports: two
LSTMCells and a Linear stepped over input.split(1, dim=1) with a
prediction of `future` steps fed back, MSELoss and the LBFGS optimizer
with a closure, then a no_grad prediction. Differences from the original,
each because onemodel computes in float32 only: the data and the model
stay float32 (the original calls .double() and builds its states with
dtype=torch.double); the sine data is generated in the driver instead of
read from traindata.pt; sizes are tiny."""

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.optim as optim


class Sequence(nn.Module):
    def __init__(self, hidden=51):
        super(Sequence, self).__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.float)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.float)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.float)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.float)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def generate_sine_wave(N=6, L=24, T=20):
    np.random.seed(2)
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float32')
    return data


def sweep_drive(run):
    np.random.seed(0)
    torch.manual_seed(0)
    data = generate_sine_wave()
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    seq = Sequence(hidden=8)
    seq.float()
    run.sync_weights("seq", seq)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)
    closure_losses, test_losses = [], []
    for i in range(2):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            closure_losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 5
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            test_losses.append(loss.item())
            y = pred.detach().numpy()
    run.result("closure_losses", closure_losses)
    run.result("test_losses", test_losses)
    run.result("prediction", y[:, -8:])
