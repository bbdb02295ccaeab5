"""PyTorch's MNIST example network (examples/mnist/main.py, `Net`), trained
step by step the way ddp-train trains --model cnn --no-dropout --no-shuffle:
the first ROWS rows of the IDX data in order, batch after batch (again from
the first when they run out), the same initial parameters, Adadelta at lr
1.0. Writes the initial parameters in ddp-train's flat layout
(model/layout.hpp: the layers from last to first, each layer's bias before
its weight), trains STEPS steps, writes the final ones the same way, and
prints each step's loss.

    torch_net.py DATA_DIR ROWS BATCH STEPS INIT_OUT FINAL_OUT
"""
import gzip
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def idx(path, rows):
    with gzip.open(path, "rb") as f:
        magic = struct.unpack(">I", f.read(4))[0]
        dims = struct.unpack(">" + "I" * (magic & 0xFF), f.read(4 * (magic & 0xFF)))
        per_row = 1
        for d in dims[1:]:
            per_row *= d
        return torch.frombuffer(bytearray(f.read(rows * per_row)), dtype=torch.uint8).reshape(rows, *dims[1:])


def flat(net):
    """ddp-train's order: fc2.b, fc2.w, fc1.b, fc1.w, conv2.b, conv2.w, conv1.b, conv1.w."""
    parts = []
    for layer in (net.fc2, net.fc1, net.conv2, net.conv1):
        parts += [layer.bias.detach().reshape(-1), layer.weight.detach().reshape(-1)]
    return torch.cat(parts).numpy().astype("<f4").tobytes()


def main():
    data, rows, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    init_out, final_out = sys.argv[5], sys.argv[6]
    torch.set_num_threads(1)
    torch.manual_seed(1)
    x = idx(f"{data}/train-images-idx3-ubyte.gz", rows).float().div(255.0).unsqueeze(1)
    y = idx(f"{data}/train-labels-idx1-ubyte.gz", rows).long()
    net = Net()
    net.eval()  # dropout off; nothing else in Net depends on the mode
    with open(init_out, "wb") as f:
        f.write(flat(net))
    opt = torch.optim.Adadelta(net.parameters(), lr=1.0)
    for step in range(steps):
        first = step % (rows // batch) * batch
        xb, yb = x[first:first + batch], y[first:first + batch]
        opt.zero_grad()
        loss = F.nll_loss(net(xb), yb)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.6f}")
    with open(final_out, "wb") as f:
        f.write(flat(net))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread")


if __name__ == "__main__":
    main()
