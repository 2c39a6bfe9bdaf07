// `mini-gpt lesson 12`'s printout and JSON (report/lesson_format.h).
#include "report/lesson_format.h"

#include "report/text.h"

namespace mg {
namespace {

using json = nlohmann::ordered_json;

// "[a, b, c]" with each number at %.9g (integers as integers).
std::string list(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + format("%.9g", v[i]);
  return out + "]";
}

// The lesson's numbers as it writes them: fixed point, no trailing zeros (0.000002, not 2e-06).
std::string as_written(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    std::string number = format("%.9f", v[i]);
    number.erase(number.find_last_not_of('0') + 1);
    if (number.back() == '.') number.pop_back();
    out += (i ? ", " : "") + number;
  }
  return out + "]";
}

std::vector<double> row(const Tensor& t, int64_t first, int64_t count) {
  return {t.data() + first, t.data() + first + count};
}

// A [..,R,C] tensor's trailing matrices, one row a line, each prefixed by INDENT.
std::string matrix(const Tensor& t, const std::string& indent, const char* number = "%.9g") {
  const int64_t C = t.dim(-1);
  std::string out;
  for (int64_t r = 0; r * C < t.numel(); ++r) {
    out += indent + "[";
    for (int64_t c = 0; c < C; ++c) out += (c ? ", " : "") + format(number, static_cast<double>(t[r * C + c]));
    out += "]\n";
  }
  return out;
}

json tensor_json(const Tensor& t) {
  json values = json::array();
  for (float v : t.span()) values.push_back(round9(v));
  return {{"shape", t.shape()}, {"values", values}};
}

json numbers(const std::vector<double>& v) {
  json out = json::array();
  for (double x : v) out.push_back(round9(x));
  return out;
}

std::string checks_of(const Lesson12& l, const std::string& section) {
  std::string out = "   checks (the lesson's number | mini-gpt's):\n";
  for (const auto& [name, c] : l.checks)
    if (name == section)
      out += format("   %-8s", c.agrees() ? "agrees" : "DIFFERS") + c.what + ": " + as_written(c.lesson) + " | " + list(c.ours) +
             "\n";
  return out;
}

}  // namespace

std::string format_lesson12(const Lesson12& l) {
  std::string out =
      "lesson 12, multi-head attention: its examples rerun with mini-gpt's ops (split_heads, merge_heads, linear,\n"
      "causal_attention_weights, matmul), on the lesson's toy, not on a trained model\n\n";

  const OneRowLimit& o = l.one_row;
  out += "1. One set of reading ratios, and where it gets stuck (一套读取比例，会卡在哪里？)\n";
  out += format("   V = [[%g, %g], [%g, %g]], target %s; one row [a, 1-a] gives [a, 2(1-a)]\n", o.V[0], o.V[1], o.V[2],
                o.V[3], list(o.target).c_str());
  out += format("   the first coordinate asks a = %.9g: %s; the second asks a = %.9g: %s\n", o.a_first,
                list(o.with_a_first).c_str(), o.a_second, list(o.with_a_second).c_str());
  out += format("   the nearest any a in [0, 1] gets: a = %.9g gives %s, %.6f from the target\n", o.nearest_a,
                list(o.nearest).c_str(), o.nearest_distance);
  out += "   two heads, each its own row over its own coordinate (weights @ split_heads(V, 2), merged):\n";
  out += "   head 0 " + list(row(o.head_weights, 0, 2)) + " -> " + format("%.9g", o.two_heads[0]) + ", head 1 " +
         list(row(o.head_weights, 2, 2)) + " -> " + format("%.9g", o.two_heads[1]) + ", concatenated " +
         list(row(o.two_heads, 0, 2)) + "\n";
  out += checks_of(l, "one_row") + "\n";

  const SplitExample& s = l.split;
  out += "2. Split and merge (两套比例，数组该怎样摆？): x = 0..11 as [B,T,D] = [1,3,4]\n" + matrix(s.x, "   ");
  out += "   split_heads(x, 2) -> [B,H,T,d] = " + shape_str(s.heads.shape()) + ": the feature axis is split, every head keeps every position\n";
  out += "   head 0:\n" + matrix(s.heads.view(0, {3, 2}), "     ") + "   head 1:\n" + matrix(s.heads.view(6, {3, 2}), "     ");
  out += "   merge_heads(split_heads(x)) " + std::string(s.round_trip ? "equals x" : "DIFFERS from x") + "\n";
  out += checks_of(l, "split") + "\n";

  const RandomProjections& p = l.random;
  out += format("3. Fixed random parameters (两个头会读到哪里): torch.manual_seed(%llu), four nn.Linear(4, 4, bias=False)\n",
                static_cast<unsigned long long>(p.seed));
  out += format("   PyTorch's CPU generator (MT19937) and kaiming_uniform_(a = sqrt 5): U(-%.9g, %.9g), drawn in order\n",
                p.bound, p.bound);
  const std::pair<const char*, const Tensor*> projections[] = {
      {"q_proj", &p.q_proj}, {"k_proj", &p.k_proj}, {"v_proj", &p.v_proj}, {"out_proj", &p.out_proj}};
  for (const auto& [name, w] : projections) out += format("   %s.weight [out,in]:\n", name) + matrix(*w, "     ", "%.8f");
  out += format("   q, k, v = split_heads(linear(x, W), 2): [1,2,3,2]; scores scaled by 1/sqrt(d) = %.9g (d = 2, not D = 4)\n",
                static_cast<double>(p.scale));
  out += "   projected_weights [B,H,T,T] = [1,2,3,3] (float32 ops; row t the query, column s the key):\n";
  for (int64_t h = 0; h < 2; ++h) out += format("   head %lld:\n", static_cast<long long>(h)) + matrix(p.weights.view(h * 9, {3, 3}), "     ", "%.9f");
  out += "   the same in double from the same float32 parameters, position 1:\n";
  for (int64_t h = 0; h < 2; ++h)
    out += format("     head %lld [%.9f, %.9f, %.9f]\n", static_cast<long long>(h), p.weights_double[h * 9 + 3],
                  p.weights_double[h * 9 + 4], p.weights_double[h * 9 + 5]);
  out += "   context = weights @ v, all heads at once [1,2,3,2]:\n" + matrix(p.context.view(0, {6, 2}), "     ");
  out += format("   the lesson prints 6 decimals of these: the double's rounded (head 1 %.9f -> %.6f); float32's %.9f\n"
                "   prints %.6f, as PyTorch's float32 softmax does\n",
                p.weights_double[12], p.weights_double[12], static_cast<double>(p.weights[12]),
                static_cast<double>(p.weights[12]));
  out += format("   the lesson's loop, one head at a time ([1,3,2] each) and stacked: max |difference| %g\n",
                p.loop_difference);
  out += "   output = linear(merge_heads(context), out_proj) [1,3,4]: concatenated per position, then mixed by Wo\n" +
         matrix(p.output, "     ");
  out += checks_of(l, "random") + "\n";

  const ParameterCounts& c = l.parameters;
  out += format("4. More heads, more parameters? (头越多，参数一定越多吗？) D = %lld, T = %lld\n", static_cast<long long>(c.D),
                static_cast<long long>(c.T));
  out += "   heads  head width d  q,k,v,out parameters (one block)  [T,T] score tables: entries per block per text\n";
  for (const HeadCountCost& h : c.counts)
    out += format("   %5lld  %12lld  %31lld  %lld x %lld x %lld = %lld\n", static_cast<long long>(h.heads),
                  static_cast<long long>(h.head_width), static_cast<long long>(h.attention_parameters),
                  static_cast<long long>(h.heads), static_cast<long long>(c.T), static_cast<long long>(c.T),
                  static_cast<long long>(h.score_entries));
  out += checks_of(l, "parameters") + "\n";

  const IndivisibleWidth& w = l.indivisible;
  out += format("5. D = %lld into %lld heads (总宽度也要能整除头数): ", static_cast<long long>(w.D), static_cast<long long>(w.heads));
  out += (w.refused ? "refused: " + w.message : std::string("NOT refused")) + "\n";
  out += checks_of(l, "indivisible") + "\n";

  const CheckQuestions& q = l.questions;
  out += "6. The two check questions (两道检查题)\n";
  out += "   1. 0..11 in one head: shape " + shape_str(q.one_head_shape) + ", head 0 position 1 " + list(q.one_head_position1) +
         format("; D 64 with 2 heads: d = %lld, 4D^2 = %lld parameters\n", static_cast<long long>(q.default_head_width),
                static_cast<long long>(q.default_parameters));
  out += "   2. 0..7 as [1,2,4]: split_heads gives " + shape_str(q.correct_shape) + ", the reshape without transpose " +
         shape_str(q.wrong_shape) + ": the shape cannot tell them apart;\n      head 0, position 1: right " +
         list(q.correct_position1) + ", wrong " + list(q.wrong_position1) + "\n";
  out += checks_of(l, "questions") + "\n";

  size_t agreeing = 0;
  for (const auto& check : l.checks) agreeing += check.second.agrees();
  out += format("%zu of %zu of the lesson's numbers agree with mini-gpt's\n", agreeing, l.checks.size());
  return out;
}

json lesson12_json(const Lesson12& l) {
  const OneRowLimit& o = l.one_row;
  const RandomProjections& p = l.random;
  const CheckQuestions& q = l.questions;
  json out = {{"lesson", 12}};
  out["one_row"] = {{"V", numbers(o.V)}, {"target", numbers(o.target)}, {"a_first", round9(o.a_first)},
                    {"a_second", round9(o.a_second)}, {"with_a_first", numbers(o.with_a_first)},
                    {"with_a_second", numbers(o.with_a_second)}, {"nearest_a", round9(o.nearest_a)},
                    {"nearest", numbers(o.nearest)}, {"nearest_distance", round9(o.nearest_distance)},
                    {"head_weights", tensor_json(o.head_weights)}, {"two_heads", tensor_json(o.two_heads)}};
  out["split"] = {{"x", tensor_json(l.split.x)}, {"heads", tensor_json(l.split.heads)},
                  {"merged", tensor_json(l.split.merged)}, {"round_trip", l.split.round_trip}};
  out["random"] = {{"seed", p.seed}, {"bound", p.bound}, {"q_proj", tensor_json(p.q_proj)},
                   {"k_proj", tensor_json(p.k_proj)}, {"v_proj", tensor_json(p.v_proj)},
                   {"out_proj", tensor_json(p.out_proj)}, {"q", tensor_json(p.q)}, {"k", tensor_json(p.k)},
                   {"v", tensor_json(p.v)}, {"scale", round9(p.scale)}, {"weights", tensor_json(p.weights)},
                   {"weights_double", numbers(p.weights_double)}, {"context", tensor_json(p.context)},
                   {"context_loop", tensor_json(p.context_loop)}, {"loop_difference", p.loop_difference},
                   {"output", tensor_json(p.output)}};
  json counts = json::array();
  for (const HeadCountCost& h : l.parameters.counts)
    counts.push_back({{"heads", h.heads}, {"head_width", h.head_width}, {"attention_parameters", h.attention_parameters},
                      {"score_entries", h.score_entries}});
  out["parameters"] = {{"D", l.parameters.D}, {"T", l.parameters.T}, {"counts", counts}};
  out["indivisible"] = {{"D", l.indivisible.D}, {"heads", l.indivisible.heads}, {"refused", l.indivisible.refused},
                        {"message", l.indivisible.message}};
  out["questions"] = {{"one_head_shape", q.one_head_shape}, {"one_head_position1", numbers(q.one_head_position1)},
                      {"default_head_width", q.default_head_width}, {"default_parameters", q.default_parameters},
                      {"correct_shape", q.correct_shape}, {"wrong_shape", q.wrong_shape},
                      {"correct_position1", numbers(q.correct_position1)},
                      {"wrong_position1", numbers(q.wrong_position1)}};
  json checks = json::array();
  size_t agreeing = 0;
  for (const auto& [section, c] : l.checks) {
    checks.push_back({{"section", section}, {"what", c.what}, {"lesson", numbers(c.lesson)},
                      {"mini_gpt", c.ours}, {"tolerance", c.tolerance}, {"agrees", c.agrees()}});
    agreeing += c.agrees();
  }
  out["checks"] = checks;
  out["checks_total"] = l.checks.size();
  out["checks_agreeing"] = agreeing;
  return out;
}

}  // namespace mg
