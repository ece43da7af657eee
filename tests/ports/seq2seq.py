"""The PyTorch tutorial "NLP from scratch: translation with a
sequence-to-sequence network and attention" (seq2seq_translation_tutorial),
re-expressed on onemodel by changing the imports: EncoderRNN (Embedding,
GRU batch_first), BahdanauAttention (Wa, Ua, Va, tanh, softmax, bmm),
AttnDecoderRNN (torch.empty(...).fill_(SOS_token), teacher forcing through
target_tensor[:, i].unsqueeze(1), greedy topk(1) otherwise,
log_softmax, the concatenated attentions), the DataLoader over a
TensorDataset of torch.LongTensor ids with a RandomSampler, NLLLoss over
view(-1, ...), two Adam optimizers, and evaluate()'s decoding with
topk/squeeze and EOS search. The French-English pairs are replaced by
synthetic id sequences; sizes are tiny."""

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.nn.functional as F
from onemodel import optim
from onemodel.utils.data import DataLoader, RandomSampler, TensorDataset

device = torch.device("cpu")
SOS_token = 0
EOS_token = 1
MAX_LENGTH = 5


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size

        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)

        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)

        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []

        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            if target_tensor is not None:
                # Teacher forcing: Feed the target as the next input
                decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
            else:
                # Without teacher forcing: use its own predictions as the next input
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # detach from history as input

        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)

        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))

        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)

        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)

        return output, hidden, attn_weights


def get_dataloader(batch_size, n, vocab, seed):
    rng = np.random.default_rng(seed)
    input_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    target_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
    for idx in range(n):
        length = int(rng.integers(2, MAX_LENGTH))
        inp = rng.integers(2, vocab, length - 1).tolist() + [EOS_token]
        tgt = list(reversed(inp[:-1])) + [EOS_token]
        input_ids[idx, :len(inp)] = inp
        target_ids[idx, :len(tgt)] = tgt
    train_data = TensorDataset(torch.LongTensor(input_ids).to(device), torch.LongTensor(target_ids).to(device))
    train_sampler = RandomSampler(train_data)
    train_dataloader = DataLoader(train_data, sampler=train_sampler, batch_size=batch_size)
    return input_ids, train_dataloader


def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    total_loss = 0
    for data in dataloader:
        input_tensor, target_tensor = data

        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()

        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)

        loss = criterion(
            decoder_outputs.view(-1, decoder_outputs.size(-1)),
            target_tensor.view(-1)
        )
        loss.backward()

        encoder_optimizer.step()
        decoder_optimizer.step()

        total_loss += loss.item()

    return total_loss / len(dataloader)


def evaluate(encoder, decoder, input_tensor):
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)

        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()

        decoded_words = []
        for idx in decoded_ids:
            if idx.item() == EOS_token:
                decoded_words.append('<EOS>')
                break
            decoded_words.append(idx.item())
    return decoded_words, decoder_attn


def sweep_drive(run):
    torch.manual_seed(0)
    vocab, hidden_size, batch_size = 9, 8, 3
    input_ids, train_dataloader = get_dataloader(batch_size, 6, vocab, 0)
    encoder = EncoderRNN(vocab, hidden_size, dropout_p=0.0).to(device)
    decoder = AttnDecoderRNN(hidden_size, vocab, dropout_p=0.0).to(device)
    run.sync_weights("encoder", encoder)
    run.sync_weights("decoder", decoder)
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    with run.draws():
        losses = [train_epoch(train_dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion) for _ in range(2)]
    encoder.eval()
    decoder.eval()
    words, attn = evaluate(encoder, decoder, torch.tensor(input_ids[:1].astype(np.int64)))
    run.result("losses", losses)
    run.result("decoded", [-1 if w == '<EOS>' else w for w in words])
    run.result("attention", attn.numpy()[0])
