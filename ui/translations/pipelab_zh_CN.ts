<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>ChartExport</name>
    <message>
        <source>PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)</source>
        <translation>PNG 图像 (*.png);;SVG 矢量图 (*.svg);;PDF 文档 (*.pdf)</translation>
    </message>
    <message>
        <source>%1: unknown chart format; use a .png, .svg or .pdf file name</source>
        <translation>%1：未知的图表格式；请使用 .png、.svg 或 .pdf 文件名</translation>
    </message>
    <message>
        <source>there is no chart to export</source>
        <translation>没有可导出的图表</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>could not write the chart to %1</source>
        <translation>无法把图表写入 %1</translation>
    </message>
</context>
<context>
    <name>CoreMessage</name>
    <message>
        <source>finished %1 steps in %2</source>
        <translation>已完成 %1 步，用时 %2</translation>
    </message>
    <message>
        <source>stopped after %1 of %2 steps</source>
        <translation>已在第 %1 步后停止（共 %2 步）</translation>
    </message>
    <message>
        <source>error: %1</source>
        <translation>错误：%1</translation>
    </message>
    <message>
        <source>step %1/%2: loss %3, accuracy %4, validation loss %5, validation accuracy %6</source>
        <translation>第 %1/%2 步：损失 %3，准确率 %4，验证损失 %5，验证准确率 %6</translation>
    </message>
    <message>
        <source>step %1/%2: loss %3, validation loss %4</source>
        <translation>第 %1/%2 步：损失 %3，验证损失 %4</translation>
    </message>
    <message>
        <source>step %1/%2: loss %3, accuracy %4</source>
        <translation>第 %1/%2 步：损失 %3，准确率 %4</translation>
    </message>
    <message>
        <source>step %1/%2: loss %3</source>
        <translation>第 %1/%2 步：损失 %3</translation>
    </message>
    <message>
        <source>pp x chunks = %1 (pp = %2, chunks = %3) but the model has %4 splittable layers; use pp x chunks &lt;= %5 or add layers</source>
        <translation>pp x chunks = %1（pp = %2，chunks = %3），但模型只有 %4 个可切分的层；请使用 pp x chunks &lt;= %5，或增加层</translation>
    </message>
    <message>
        <source>training.batch_size = %1 is not divisible by parallel.dp = %2; every replica takes an equal share of the batch</source>
        <translation>training.batch_size = %1 不能被 parallel.dp = %2 整除；每个副本要分到同样多的样本</translation>
    </message>
    <message>
        <source>parallel.microbatches = %1 does not divide the per-replica batch training.batch_size / parallel.dp = %2; use e.g. %3</source>
        <translation>parallel.microbatches = %1 不能整除每个副本的批次 training.batch_size / parallel.dp = %2；可改用例如 %3</translation>
    </message>
    <message>
        <source>parallel.microbatches: interleaved-1f1b needs microbatches (%1) to be a multiple of its round count max(1, microbatches / pp) = %2 (as PyTorch&apos;s ScheduleInterleaved1F1B); every m &lt; 2 * pp (%3) and every multiple of pp works; try microbatches = %4 or %5</source>
        <translation>parallel.microbatches：interleaved-1f1b 要求微批次数（%1）是其轮数 max(1, microbatches / pp) = %2 的倍数（与 PyTorch 的 ScheduleInterleaved1F1B 相同）；任何 m &lt; 2 * pp（%3）以及 pp 的任何倍数都可以；可试 microbatches = %4 或 %5</translation>
    </message>
    <message>
        <source>parallel.microbatches: dualpipev needs microbatches (%1) &gt;= its stage count 2 * pp = %2 (as PyTorch&apos;s ScheduleDualPipeV); try microbatches = %3</source>
        <translation>parallel.microbatches：dualpipev 要求微批次数（%1）&gt;= 其阶段数 2 * pp = %2（与 PyTorch 的 ScheduleDualPipeV 相同）；可试 microbatches = %3</translation>
    </message>
    <message>
        <source>parallel.microbatches = %1 must be &gt;= parallel.pp = %2 for pipedream-2bw (two weight versions suffice only when a step&apos;s micro-batches fill the pipeline); use microbatches = %3</source>
        <translation>pipedream-2bw 要求 parallel.microbatches = %1 &gt;= parallel.pp = %2（只有当一步的微批次填满流水线时，两个权重版本才够用）；请使用 microbatches = %3</translation>
    </message>
    <message>
        <source>parallel.schedule = interleaved-1f1b needs parallel.chunks &gt;= 2 (virtual stages per device); with chunks = 1 it is plain 1f1b</source>
        <translation>parallel.schedule = interleaved-1f1b 要求 parallel.chunks &gt;= 2（每个设备上的虚拟阶段数）；chunks = 1 时它就是普通的 1f1b</translation>
    </message>
    <message>
        <source>parallel.chunks = %1 needs parallel.schedule = interleaved-1f1b (schedule %2 places one stage per device); set chunks = 1 or change the schedule</source>
        <translation>parallel.chunks = %1 需要 parallel.schedule = interleaved-1f1b（调度 %2 每个设备只放一个阶段）；请设 chunks = 1 或更换调度</translation>
    </message>
    <message>
        <source>tp = %1 does not divide linear layer %2&apos;s width %3; choose a tp that divides it or change the layer&apos;s out</source>
        <translation>tp = %1 不能整除线性层 %2 的宽度 %3；请选择能整除它的 tp，或修改该层的 out</translation>
    </message>
    <message>
        <source>parallel.sequence_parallel splits the work tensor parallelism repeats on every shard, so it needs parallel.tp &gt;= 2 (now %1); raise tp or set sequence_parallel = false</source>
        <translation>parallel.sequence_parallel 切分的是张量并行在每个分片上重复的计算，因此需要 parallel.tp &gt;= 2（当前为 %1）；请增大 tp 或设 sequence_parallel = false</translation>
    </message>
    <message>
        <source>training.optimizer.lr = %1 must be &gt; 0, e.g. 0.05</source>
        <translation>training.optimizer.lr = %1 必须 &gt; 0，例如 0.05</translation>
    </message>
    <message>
        <source>pp = %1 but the model has %2 splittable layers; use pp &lt;= %3 or add layers</source>
        <translation>pp = %1，但模型只有 %2 个可切分的层；请使用 pp &lt;= %3，或增加层</translation>
    </message>
    <message>
        <source>model.input = %1 gives %2 features but data.source &apos;%3&apos; has %4; set model.input to [%5]</source>
        <translation>model.input = %1 给出 %2 个特征，但 data.source &apos;%3&apos; 有 %4 个；请把 model.input 设为 [%5]</translation>
    </message>
    <message>
        <source>the model outputs %1 values but data.source &apos;%2&apos; has %3 classes; set the last linear layer&apos;s out to %4</source>
        <translation>模型输出 %1 个值，但 data.source &apos;%2&apos; 有 %3 个类别；请把最后一个线性层的 out 设为 %4</translation>
    </message>
    <message>
        <source>data.path is empty; data.source = &apos;%1&apos; reads files: give the folder holding them</source>
        <translation>data.path 为空；data.source = &apos;%1&apos; 读取文件：请给出存放它们的文件夹</translation>
    </message>
    <message>
        <source>data.path is empty; data.source = &apos;%1&apos; reads a CSV file: give its path</source>
        <translation>data.path 为空；data.source = &apos;%1&apos; 读取一个 CSV 文件：请给出它的路径</translation>
    </message>
    <message>
        <source>data.path is empty; data.source = &apos;%1&apos; reads a UTF-8 text file: give its path (the LICENSE file will do)</source>
        <translation>data.path 为空；data.source = &apos;%1&apos; 读取一个 UTF-8 文本文件：请给出它的路径（LICENSE 文件即可）</translation>
    </message>
    <message>
        <source>parallel.ep = %1 does not divide parallel.dp = %2: expert-parallel groups are carved out of the data-parallel replicas; use an ep that divides dp, or raise dp</source>
        <translation>parallel.ep = %1 不能整除 parallel.dp = %2：专家并行组是从数据并行副本中划分出来的；请使用能整除 dp 的 ep，或增大 dp</translation>
    </message>
    <message>
        <source>parallel.ep = %1 spreads moe layers&apos; experts over replicas, and this model has none; set ep = 1 or add a moe layer (or experts to a transformer_block)</source>
        <translation>parallel.ep = %1 把 MoE 层的专家分布到各副本上，而此模型没有专家；请设 ep = 1 或添加一个 moe 层（或给 transformer_block 加上专家）</translation>
    </message>
    <message>
        <source>model.layers[%1] has %2 experts, which parallel.ep = %3 cannot share out evenly; use an ep that divides the experts</source>
        <translation>model.layers[%1] 有 %2 个专家，parallel.ep = %3 无法均分；请使用能整除专家数的 ep</translation>
    </message>
    <message>
        <source>parallel.ep &gt; 1 exchanges tokens between replicas at every micro-batch, which asynchronous data parallel cannot wait for; set parallel.update = sync or ep = 1</source>
        <translation>parallel.ep &gt; 1 时每个微批次都要在副本之间交换词元，异步数据并行无法等待；请设 parallel.update = sync 或 ep = 1</translation>
    </message>
    <message>
        <source>parallel.zero = %1 reduce-scatters the gradients after every micro-batch&apos;s backward, which a pipeline (pp = %2) would wait on between its stages (DeepSpeed refuses it too); use zero = 1 with a pipeline, as Megatron-LM&apos;s distributed optimizer does, or pp = 1</source>
        <translation>parallel.zero = %1 会在每个微批次的反向之后对梯度做 reduce-scatter，流水线（pp = %2）的各阶段之间将不得不等待它（DeepSpeed 同样拒绝这种组合）；流水线请使用 zero = 1（如 Megatron-LM 的分布式优化器），或设 pp = 1</translation>
    </message>
    <message>
        <source>parallel.zero = %1 shards the state that one synchronous step updates, and %2 updates each replica on its own; use a synchronous schedule with update = sync, or zero = 0</source>
        <translation>parallel.zero = %1 切分的是一次同步更新所用的状态，而 %2 让每个副本各自更新；请使用同步调度并设 update = sync，或设 zero = 0</translation>
    </message>
    <message>
        <source>rank %1 has not answered for %2 s (it died, stopped or its network is cut); stopping the run</source>
        <translation>秩 %1 已有 %2 秒没有应答（它已退出、被暂停或网络中断）；运行停止</translation>
    </message>
    <message>
        <source>parallel.cp = %1 splits a Transformer&apos;s sequences over ranks, and this model does not start with an embedding; set cp = 1</source>
        <translation>parallel.cp = %1 把 Transformer 的序列分到多个秩上，而这个模型不以 embedding 开头；请设置 cp = 1</translation>
    </message>
    <message>
        <source>parallel.cp = %1 cuts the sequence length %2 into 2 x cp = %3 equal chunks (each rank takes one from each end, balancing causal attention), which it does not divide; choose a cp with 2 cp dividing model.input, or change the sequence length</source>
        <translation>parallel.cp = %1 要把序列长度 %2 切成 2 x cp = %3 个等长的块（每个秩从两端各取一块，使因果注意力的工作量均衡），但它不能整除；请选择 2 cp 能整除 model.input 的 cp，或修改序列长度</translation>
    </message>
    <message>
        <source>parallel.reshard_after_forward = false keeps ZeRO-3&apos;s gathered weights from a forward to its backward, and parallel.zero = %1 keeps them whole anyway; set zero = 3, or remove reshard_after_forward</source>
        <translation>parallel.reshard_after_forward = false 让 ZeRO-3 收集来的权重从前向一直保留到反向，而 parallel.zero = %1 本来就保留完整权重；请设 zero = 3，或去掉 reshard_after_forward</translation>
    </message>
    <message>
        <source>the model outputs %1 values per position but data.source &apos;%2&apos; has a vocabulary of %3 tokens (data.vocab); set the last linear layer&apos;s out to %4</source>
        <translation>模型在每个位置输出 %1 个值，但 data.source &apos;%2&apos; 的词表有 %3 个词元（data.vocab）；请把最后一个线性层的 out 设为 %4</translation>
    </message>
    <message>
        <source>tp = %1 does not divide embedding layer %2&apos;s vocab %3 (each shard holds vocab / tp rows); choose a tp that divides it or pad the vocab to a multiple of tp</source>
        <translation>tp = %1 不能整除嵌入层 %2 的词表大小 %3（每个分片持有 vocab / tp 行）；请选一个能整除它的 tp，或把词表补齐到 tp 的倍数</translation>
    </message>
    <message>
        <source>%1: kv_heads = %2 must divide heads = %3 (grouped-query attention shares each key/value head among heads / kv_heads query heads); use a divisor of heads (1: multi-query), or 0 for kv_heads = heads</source>
        <translation>%1：kv_heads = %2 必须整除 heads = %3（分组查询注意力让每个键/值头由 heads / kv_heads 个查询头共享）；请用 heads 的约数（1：多查询注意力），或用 0 表示 kv_heads = heads</translation>
    </message>
    <message>
        <source>%1: heads = %2 does not divide the block&apos;s width %3; choose heads that divide it (e.g. %4) or change the embedding&apos;s dim</source>
        <translation>%1：heads = %2 不能整除该块的宽度 %3；请选能整除它的 heads（例如 %4），或修改嵌入层的 dim</translation>
    </message>
    <message>
        <source>%1 must be &gt;= %2, got %3</source>
        <translation>%1 必须 &gt;= %2，当前为 %3</translation>
    </message>
    <message>
        <source>%1 = %2 is more than the %3 PipeLab plans; use at most %4</source>
        <translation>%1 = %2 超过了 PipeLab 能规划的 %3；最多用 %4</translation>
    </message>
    <message>
        <source>%1 = %2 must be in [0, 1)</source>
        <translation>%1 = %2 必须在 [0, 1) 之内</translation>
    </message>
    <message>
        <source>%1 must be in [0, 1), got %2</source>
        <translation>%1 必须在 [0, 1) 之内，当前为 %2</translation>
    </message>
    <message>
        <source>%1 = %2 must be &gt;= 0</source>
        <translation>%1 = %2 必须 &gt;= 0</translation>
    </message>
    <message>
        <source>parallel.schedule = %1 needs parallel.chunks = 2 (each device holds two virtual stages placed in a V; got chunks = %2); set chunks = 2</source>
        <translation>parallel.schedule = %1 需要 parallel.chunks = 2（每个设备持有按 V 形放置的两个虚拟阶段；当前 chunks = %2）；请设 chunks = 2</translation>
    </message>
    <message>
        <source>%1: boundary %2 is outside 1..%3 (the model has %4 layers)</source>
        <translation>%1：边界 %2 不在 1..%3 之内（模型共有 %4 层）</translation>
    </message>
    <message>
        <source>%1: boundaries must be strictly increasing (%2 follows %3)</source>
        <translation>%1：边界必须严格递增（%2 排在 %3 之后）</translation>
    </message>
    <message>
        <source>%1 must be an integer, got %2</source>
        <translation>%1 必须是整数，实际为 %2</translation>
    </message>
    <message>
        <source>%1 must be true or false, got %2</source>
        <translation>%1 必须是 true 或 false，实际为 %2</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a layer type; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是层类型；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a precision; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是精度；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not an optimizer; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是优化器；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a schedule; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是调度；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not an update mode; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是更新方式；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a partition rule; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是划分规则；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not an offload mode; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是卸载方式；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a loss; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是损失函数；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a norm; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是归一化方式；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not an activation; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是激活函数；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a data source; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是数据源；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a backend; valid: %3</source>
        <translation>%1 = &apos;%2&apos; 不是后端；可用：%3</translation>
    </message>
    <message>
        <source>%1 = &apos;%2&apos; is not a device profile; valid: %3, or the path of a device file (hardware/README.md)</source>
        <translation>%1 = &apos;%2&apos; 不是设备配置；可用：%3，或设备文件的路径（见 hardware/README.md）</translation>
    </message>
    <message>
        <source>%1: &apos;%2&apos; is not a node type of the hardware catalogue; valid: %3, or the path of a .json file that describes one (see hardware/README.md)</source>
        <translation>%1：&apos;%2&apos; 不是硬件目录中的节点类型；可用：%3，或描述节点的 .json 文件路径（见 hardware/README.md）</translation>
    </message>
    <message>
        <source>%1 = %2; repeat a layer 1 to %3 times</source>
        <translation>%1 = %2；一层可重复 1 到 %3 次</translation>
    </message>
    <message>
        <source>%1: %2 needs out (output channels) &gt;= %3, got %4</source>
        <translation>%1：%2 需要 out（输出通道数）&gt;= %3，实际为 %4</translation>
    </message>
    <message>
        <source>%1: %2 needs %3 &gt;= %4, got %5</source>
        <translation>%1：%2 需要 %3 &gt;= %4，实际为 %5</translation>
    </message>
    <message>
        <source>%1: batchnorm eps must be in (0, 1), got %2 (PyTorch&apos;s default is %3)</source>
        <translation>%1：batchnorm 的 eps 必须在 (0, 1) 内，实际为 %2（PyTorch 的默认值是 %3）</translation>
    </message>
    <message>
        <source>%1: batchnorm momentum must be in (0, 1], got %2 (PyTorch&apos;s default is %3)</source>
        <translation>%1：batchnorm 的 momentum 必须在 (0, 1] 内，实际为 %2（PyTorch 的默认值是 %3）</translation>
    </message>
    <message>
        <source>%1: %2 padding = %3 must be in [0, kernel) (kernel %4); a larger padding only adds rows of zeros</source>
        <translation>%1：%2 的 padding = %3 必须在 [0, kernel) 内（kernel 为 %4）；更大的填充只会加入全零的行</translation>
    </message>
    <message>
        <source>%1: %2&apos;s %3 x %4 window (padding %5) does not fit its %6 input; use a smaller kernel or more padding, or downsample less before it</source>
        <translation>%1：%2 的 %3 x %4 窗口（填充 %5）放不进它 %6 的输入；请使用更小的卷积核或更多填充，或在它之前少做下采样</translation>
    </message>
    <message>
        <source>%1: %2 top_k = %3 must be in [1, experts = %4]; use 1 (Switch) or 2 (GShard), or add experts</source>
        <translation>%1：%2 的 top_k = %3 必须在 [1, experts = %4] 内；请用 1（Switch）或 2（GShard），或增加专家</translation>
    </message>
    <message>
        <source>%1: %2 capacity_factor must be &gt; 0 (e.g. %3), got %4</source>
        <translation>%1：%2 的 capacity_factor 必须 &gt; 0（例如 %3），实际为 %4</translation>
    </message>
    <message>
        <source>the embedding&apos;s vocab = %1 is smaller than data.vocab = %2; set %3.vocab to at least %4</source>
        <translation>嵌入层的 vocab = %1 小于 data.vocab = %2；请把 %3.vocab 设为至少 %4</translation>
    </message>
    <message>
        <source>the layers up to %1 hold more than %2 parameters, more than PipeLab handles; use narrower or fewer linear layers</source>
        <translation>到 %1 为止的层共有超过 %2 个参数，超出 PipeLab 的处理范围；请使用更窄或更少的线性层</translation>
    </message>
    <message>
        <source>a micro-batch of %1 samples keeps and sends more than %2 GiB through the model (%3 bytes per sample), more than PipeLab handles; lower training.batch_size or raise parallel.microbatches</source>
        <translation>一个 %1 个样本的微批次在模型中保留和传递超过 %2 GiB（每个样本 %3 字节），超出 PipeLab 的处理范围；请减小 training.batch_size 或增大 parallel.microbatches</translation>
    </message>
    <message>
        <source>tp = %1 does not divide transformer_block layer %2&apos;s ffn = %3; choose a tp that divides it or change ffn</source>
        <translation>tp = %1 不能整除 transformer_block 第 %2 层的 ffn = %3；请选择能整除它的 tp，或修改 ffn</translation>
    </message>
    <message>
        <source>tp = %1 does not divide transformer_block layer %2&apos;s heads = %3 (attention is split by heads); choose a tp that divides it or change heads</source>
        <translation>tp = %1 不能整除 transformer_block 第 %2 层的 heads = %3（注意力按头切分）；请选择能整除它的 tp，或修改 heads</translation>
    </message>
    <message>
        <source>tp = %1 does not divide the sequence length %2, which parallel.sequence_parallel splits; choose a tp that divides it or change model.input</source>
        <translation>tp = %1 不能整除序列长度 %2，而 parallel.sequence_parallel 要切分它；请选择能整除它的 tp，或修改 model.input</translation>
    </message>
    <message>
        <source>%1 = %2 must be &gt;= 1 (updates over which the step size returns to training.optimizer.lr); to keep the plain step size set lr_rescheduling = false</source>
        <translation>%1 = %2 必须 &gt;= 1（步长在这么多次更新内回到 training.optimizer.lr）；若要保持普通步长，请设 lr_rescheduling = false</translation>
    </message>
    <message>
        <source>%1 = %2 must be &gt; 0, e.g. %3</source>
        <translation>%1 = %2 必须 &gt; 0，例如 %3</translation>
    </message>
    <message>
        <source>%1 = %2 must be &gt;= 0 (0: as many nodes as the run needs)</source>
        <translation>%1 = %2 必须 &gt;= 0（0：运行需要多少节点就用多少）</translation>
    </message>
    <message numerus="yes">
        <source>%1 (and %n more problem(s))</source>
        <translation>
            <numerusform>%1（另有 %n 个问题）</numerusform>
        </translation>
    </message>
    <message>
        <source>simulation.cluster needs a device, but simulation.profile = unit prices every op at its unit cost on no hardware; set simulation.profile to a device (e.g. h100) or drop simulation.cluster</source>
        <translation>simulation.cluster 需要一种设备，但 simulation.profile = unit 按单位代价给每个操作计时，不对应任何硬件；请把 simulation.profile 设为某种设备（例如 h100），或去掉 simulation.cluster</translation>
    </message>
    <message>
        <source>%1: file not found</source>
        <translation>%1：找不到文件</translation>
    </message>
    <message>
        <source>%1: the training split has %2 samples, fewer than training.batch_size = %3; lower the batch size or use more samples</source>
        <translation>%1：训练集只有 %2 个样本，少于 training.batch_size = %3；请减小批大小或使用更多样本</translation>
    </message>
    <message>
        <source>data.limit is %1; use 0 for all samples or a positive count</source>
        <translation>data.limit 为 %1；请用 0 表示全部样本，或给出一个正数</translation>
    </message>
    <message>
        <source>text: data.stride is %1; use 1..%2 (data.sequence_length; more would skip characters), or 0 for %3</source>
        <translation>text：data.stride 为 %1；请使用 1..%2（data.sequence_length；更大会跳过字符），或用 0 表示 %3</translation>
    </message>
    <message>
        <source>the model outputs %1 values per position but %2 has a vocabulary of %3 tokens; set the last linear layer&apos;s out to %4</source>
        <translation>模型在每个位置输出 %1 个值，但 %2 的词表有 %3 个词元；请把最后一个线性层的 out 设为 %4</translation>
    </message>
    <message>
        <source>the embedding&apos;s vocab = %1 but %2 has %3 tokens; set model.layers[0].vocab to at least %4</source>
        <translation>嵌入层的 vocab = %1，但 %2 有 %3 个词元；请把 model.layers[0].vocab 设为至少 %4</translation>
    </message>
    <message>
        <source>data.samples = %1 needs about %2 but only %3 of memory is available; use fewer samples</source>
        <translation>data.samples = %1 约需 %2，但可用内存只有 %3；请使用更少的样本</translation>
    </message>
    <message>
        <source>this run needs about %1 for weights, gradients, optimizer state and activations (device %2 alone %3) but only %4 of memory is available; use a smaller model or training.batch_size, or fewer devices</source>
        <translation>这次运行的权重、梯度、优化器状态和激活共需约 %1（仅设备 %2 就要 %3），但可用内存只有 %4；请使用更小的模型或 training.batch_size，或更少的设备</translation>
    </message>
    <message>
        <source>this run needs about %1 for weights, gradients, optimizer state and activations (device %2 alone %3) but only %4 of memory is available; use a smaller model or training.batch_size, parallel.recompute = true, or fewer devices</source>
        <translation>这次运行的权重、梯度、优化器状态和激活共需约 %1（仅设备 %2 就要 %3），但可用内存只有 %4；请使用更小的模型或 training.batch_size、设置 parallel.recompute = true，或使用更少的设备</translation>
    </message>
    <message>
        <source>this run needs about %1 for weights, gradients, optimizer state and activations (device %2 alone %3) but only %4 of memory is available; use a smaller model or training.batch_size, 1f1b instead of gpipe, or fewer devices</source>
        <translation>这次运行的权重、梯度、优化器状态和激活共需约 %1（仅设备 %2 就要 %3），但可用内存只有 %4；请使用更小的模型或 training.batch_size、用 1f1b 代替 gpipe，或使用更少的设备</translation>
    </message>
    <message>
        <source>this run needs about %1 for weights, gradients, optimizer state and activations (device %2 alone %3) but only %4 of memory is available; use a smaller model or training.batch_size, 1f1b instead of gpipe, parallel.recompute = true, or fewer devices</source>
        <translation>这次运行的权重、梯度、优化器状态和激活共需约 %1（仅设备 %2 就要 %3），但可用内存只有 %4；请使用更小的模型或 training.batch_size、用 1f1b 代替 gpipe、设置 parallel.recompute = true，或使用更少的设备</translation>
    </message>
    <message>
        <source>device %1: %2</source>
        <translation>设备 %1：%2</translation>
    </message>
    <message>
        <source>%1 must be false, true (&quot;full&quot;: keep only each stage&apos;s input and rebuild the stage), &quot;block&quot; (keep each Transformer block&apos;s input and rebuild one block at a time, as Megatron-LM) or &quot;selective&quot; (recompute transformer blocks&apos; attention), got %2</source>
        <translation>%1 必须是 false、true（&quot;full&quot;：只保留每个阶段的输入并重建整个阶段）、&quot;block&quot;（保留每个 Transformer 块的输入，每次重建一个块，与 Megatron-LM 相同）或 &quot;selective&quot;（重计算 Transformer 块的注意力），实际为 %2</translation>
    </message>
    <message>
        <source>parallel.recompute = &quot;selective&quot; recomputes transformer blocks&apos; attention, and this model has none; use recompute = true (full) or false</source>
        <translation>parallel.recompute = &quot;selective&quot; 重计算 Transformer 块的注意力，而此模型没有 Transformer 块；请使用 recompute = true（full）或 false</translation>
    </message>
    <message>
        <source>parallel.recompute = &quot;block&quot; keeps each Transformer block&apos;s input, and this model has none; use recompute = true (full) or false</source>
        <translation>parallel.recompute = &quot;block&quot; 保留每个 Transformer 块的输入，而此模型没有 Transformer 块；请使用 recompute = true（full）或 false</translation>
    </message>
    <message>
        <source>parallel.recompute_layers = %1 must be at least 1 (the blocks rebuilt together under recompute = &quot;block&quot;)</source>
        <translation>parallel.recompute_layers = %1 至少应为 1（recompute = &quot;block&quot; 时一起重算的块数）</translation>
    </message>
    <message>
        <source>parallel.recompute_layers = %1 groups the blocks that recompute = &quot;block&quot; rebuilds together; set recompute = &quot;block&quot;, or remove recompute_layers</source>
        <translation>parallel.recompute_layers = %1 把 recompute = &quot;block&quot; 一起重算的块分组；请设 recompute = &quot;block&quot;，或删去 recompute_layers</translation>
    </message>
    <message>
        <source>dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 makes a schedule of about %7 ops in one replica, more than the %8 PipeLab builds; use fewer devices or micro-batches</source>
        <translation>dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 在一个副本中产生约 %7 个操作的调度，超过 PipeLab 能构建的 %8 个；请减少设备数或微批次数</translation>
    </message>
    <message>
        <source>dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 makes a schedule of about %7 ops, more than the %8 PipeLab builds; simulate one replica for all (pipelab-cli simulate without --trace or --csv), or use fewer devices or micro-batches</source>
        <translation>dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 产生约 %7 个操作的调度，超过 PipeLab 能构建的 %8 个；请只模拟一个副本代表全部副本（pipelab-cli simulate 不加 --trace 或 --csv），或减少设备数或微批次数</translation>
    </message>
    <message>
        <source>dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 makes a schedule of about %7 ops, more than the %8 PipeLab builds; use fewer devices or micro-batches</source>
        <translation>dp x tp x cp x pp x chunks x microbatches = %1 x %2 x %3 x %4 x %5 x %6 产生约 %7 个操作的调度，超过 PipeLab 能构建的 %8 个；请减少设备数或微批次数</translation>
    </message>
    <message>
        <source>%1 must be a number, got %2</source>
        <translation>%1 必须是数字，实际为 %2</translation>
    </message>
    <message>
        <source>%1 must be a string, got %2</source>
        <translation>%1 必须是字符串，实际为 %2</translation>
    </message>
    <message>
        <source>%1 must be a JSON object {...}, got %2</source>
        <translation>%1 必须是 JSON 对象 {...}，实际为 %2</translation>
    </message>
    <message>
        <source>unknown key %1 (did you mean &apos;%2&apos;?); valid keys here: %3</source>
        <translation>未知的键 %1（是否想写 &apos;%2&apos;？）；此处有效的键：%3</translation>
    </message>
    <message>
        <source>unknown key %1; valid keys here: %2</source>
        <translation>未知的键 %1；此处有效的键：%2</translation>
    </message>
    <message>
        <source>not valid JSON: %1</source>
        <translation>不是有效的 JSON：%1</translation>
    </message>
    <message>
        <source>device &apos;%1&apos;</source>
        <translation>设备 &apos;%1&apos;</translation>
    </message>
    <message>
        <source>node &apos;%1&apos;</source>
        <translation>节点 &apos;%1&apos;</translation>
    </message>
    <message>
        <source>%1 = %2 must be a positive number (%3)</source>
        <translation>%1 = %2 必须是正数（%3）</translation>
    </message>
    <message>
        <source>%1 = %2 must be a fraction in (0, 1]: the share of the peak that kernels reach</source>
        <translation>%1 = %2 必须是 (0, 1] 内的比例：内核达到的峰值份额</translation>
    </message>
    <message>
        <source>%1 = %2 must be &gt;= 0 and at most 1073741824 (MiB; 0 or absent where the device holds none)</source>
        <translation>%1 = %2 必须 &gt;= 0 且至多为 1073741824（MiB；设备不占用时为 0 或省略）</translation>
    </message>
    <message>
        <source>peak_tflops has no fp32; give the device&apos;s FP32 peak (every device has one)</source>
        <translation>peak_tflops 缺少 fp32；请给出设备的 FP32 峰值（每个设备都有）</translation>
    </message>
    <message>
        <source>achieved.gemm_fraction has no %1, which peak_tflops has; give the fraction of that peak a large GEMM sustains</source>
        <translation>achieved.gemm_fraction 缺少 peak_tflops 中已有的 %1；请给出大型 GEMM 能持续达到的该峰值比例</translation>
    </message>
    <message>
        <source>achieved.gemm_fraction.%1 has no peak in peak_tflops; add peak_tflops.%2 or drop the fraction</source>
        <translation>achieved.gemm_fraction.%1 在 peak_tflops 中没有对应峰值；请添加 peak_tflops.%2 或删去该比例</translation>
    </message>
    <message>
        <source>compute_units = %1 must be &gt;= 0 (the GPU&apos;s streaming multiprocessors; 0 or absent prices every GEMM at one rate)</source>
        <translation>compute_units = %1 必须 &gt;= 0（GPU 的流式多处理器数；为 0 或省略时所有 GEMM 按同一速率计价）</translation>
    </message>
    <message>
        <source>achieved.kernel_launch_us = %1 must be &gt;= 0 (microseconds per kernel)</source>
        <translation>achieved.kernel_launch_us = %1 必须 &gt;= 0（每个内核的微秒数）</translation>
    </message>
    <message>
        <source>achieved.op_overhead_us = %1 must be &gt;= 0 (microseconds per op; 0 or absent for a GPU)</source>
        <translation>achieved.op_overhead_us = %1 必须 &gt;= 0（每个操作的微秒数；GPU 为 0 或省略）</translation>
    </message>
    <message>
        <source>node is empty; name the node type this device sits in (e.g. dgx-h100)</source>
        <translation>node 为空；请写出此设备所在的节点类型（例如 dgx-h100）</translation>
    </message>
    <message>
        <source>%1 is missing; give the device&apos;s id (e.g. &quot;h100&quot;)</source>
        <translation>缺少 %1；请给出设备的 id（例如 &quot;h100&quot;）</translation>
    </message>
    <message>
        <source>%1 is missing; give its memory in GB (10^9 bytes)</source>
        <translation>缺少 %1；请给出其显存大小，单位 GB（10^9 字节）</translation>
    </message>
    <message>
        <source>%1 is missing; give its datasheet memory bandwidth in GB/s</source>
        <translation>缺少 %1；请给出其数据手册中的显存带宽，单位 GB/s</translation>
    </message>
    <message>
        <source>%1 is missing; give its dense datasheet peaks, e.g. {&quot;fp32&quot;: 67, &quot;bf16&quot;: 989}</source>
        <translation>缺少 %1；请给出数据手册中的稠密峰值，例如 {&quot;fp32&quot;: 67, &quot;bf16&quot;: 989}</translation>
    </message>
    <message>
        <source>%1 is missing; give what its kernels reach: gemm_fraction, memory_bandwidth_fraction, kernel_launch_us</source>
        <translation>缺少 %1；请给出其内核达到的水平：gemm_fraction、memory_bandwidth_fraction、kernel_launch_us</translation>
    </message>
    <message>
        <source>%1 is missing; give the fraction of each peak a large GEMM sustains</source>
        <translation>缺少 %1；请给出大型 GEMM 能持续达到的各峰值比例</translation>
    </message>
    <message>
        <source>%1 is missing; give the fraction of the memory bandwidth streaming kernels reach</source>
        <translation>缺少 %1；请给出流式内核达到的显存带宽比例</translation>
    </message>
    <message>
        <source>%1 is missing; give the launch cost of one kernel in microseconds</source>
        <translation>缺少 %1；请给出启动一个内核的开销，单位微秒</translation>
    </message>
    <message>
        <source>%1 is missing; name the node type it sits in (e.g. &quot;dgx-h100&quot;)</source>
        <translation>缺少 %1；请写出它所在的节点类型（例如 &quot;dgx-h100&quot;）</translation>
    </message>
    <message>
        <source>device is empty; name the device its slots hold (e.g. h100)</source>
        <translation>device 为空；请写出其插槽中的设备（例如 h100）</translation>
    </message>
    <message>
        <source>devices_per_node = %1 must be at least 1</source>
        <translation>devices_per_node = %1 必须至少为 1</translation>
    </message>
    <message>
        <source>device_link.nvls_algbw_gb_s = %1 must be &gt;= 0 (GB/s; 0 or absent where the switches cannot reduce)</source>
        <translation>device_link.nvls_algbw_gb_s = %1 必须 &gt;= 0（GB/s；交换机不能归约时为 0 或省略）</translation>
    </message>
    <message>
        <source>%1 must be &gt;= 0 (microseconds per message)</source>
        <translation>%1 必须 &gt;= 0（每条消息的微秒数）</translation>
    </message>
    <message>
        <source>device_link connects %1 devices but the node holds %2; lower devices_per_node or raise device_link.devices_connected to what the fabric connects</source>
        <translation>device_link 连接 %1 个设备，但节点容纳 %2 个；请降低 devices_per_node，或把 device_link.devices_connected 提高到互连实际连接的数量</translation>
    </message>
    <message>
        <source>network.nics = %1 must be at least 1 (a node reaches the others through its NICs)</source>
        <translation>network.nics = %1 必须至少为 1（节点通过其网卡连接其他节点）</translation>
    </message>
    <message>
        <source>%1 is missing; give the node type&apos;s id (e.g. &quot;dgx-h100&quot;)</source>
        <translation>缺少 %1；请给出节点类型的 id（例如 &quot;dgx-h100&quot;）</translation>
    </message>
    <message>
        <source>%1 is missing; name the device its slots hold (e.g. &quot;h100&quot;)</source>
        <translation>缺少 %1；请写出其插槽中的设备（例如 &quot;h100&quot;）</translation>
    </message>
    <message>
        <source>%1 is missing; give how many devices one node holds</source>
        <translation>缺少 %1；请给出一个节点容纳的设备数</translation>
    </message>
    <message>
        <source>%1 is missing; describe the fabric between its devices (bandwidth_gb_s, latency_us, devices_connected)</source>
        <translation>缺少 %1；请描述其设备之间的互连（bandwidth_gb_s、latency_us、devices_connected）</translation>
    </message>
    <message>
        <source>%1 is missing; give GB/s per device per direction</source>
        <translation>缺少 %1；请给出每设备每方向的 GB/s</translation>
    </message>
    <message>
        <source>%1 is missing; give microseconds per message</source>
        <translation>缺少 %1；请给出每条消息的微秒数</translation>
    </message>
    <message>
        <source>%1 is missing; give how many devices the fabric connects all-to-all</source>
        <translation>缺少 %1；请给出互连全互联的设备数</translation>
    </message>
    <message>
        <source>%1 is missing; describe the link to host memory (bandwidth_gb_s)</source>
        <translation>缺少 %1；请描述到主机内存的链路（bandwidth_gb_s）</translation>
    </message>
    <message>
        <source>%1 is missing; give what a host-side optimizer step sustains, GB/s</source>
        <translation>缺少 %1；请给出主机端优化器步骤能持续达到的 GB/s</translation>
    </message>
    <message>
        <source>%1 is missing; describe the NICs between nodes (nics, nic_bandwidth_gbit_s, latency_us)</source>
        <translation>缺少 %1；请描述节点之间的网卡（nics、nic_bandwidth_gbit_s、latency_us）</translation>
    </message>
    <message>
        <source>%1 is missing; give how many NICs one node has</source>
        <translation>缺少 %1；请给出一个节点的网卡数</translation>
    </message>
    <message>
        <source>%1 is missing; give Gbit/s per NIC per direction</source>
        <translation>缺少 %1；请给出每块网卡每方向的 Gbit/s</translation>
    </message>
    <message>
        <source>%1 is empty; give the input shape per sample, e.g. [%2]</source>
        <translation>%1 为空；请给出每个样本的输入形状，例如 [%2]</translation>
    </message>
    <message>
        <source>%1 is missing and data.source &apos;%2&apos; does not fix it; give the input shape per sample, e.g. &quot;input&quot;: [%3]</source>
        <translation>缺少 %1，且 data.source &apos;%2&apos; 不能确定它；请给出每个样本的输入形状，例如 &quot;input&quot;: [%3]</translation>
    </message>
    <message>
        <source>%1 must be an array of integers like [2, 4], got %2</source>
        <translation>%1 必须是整数数组，例如 [2, 4]，实际为 %2</translation>
    </message>
    <message>
        <source>%1 is an embedding, which reads token ids, but data.source &apos;%2&apos; gives feature vectors; use data.source = %3</source>
        <translation>%1 是嵌入层，读取词元 id，但 data.source &apos;%2&apos; 给出的是特征向量；请使用 data.source = %3</translation>
    </message>
    <message>
        <source>%1 needs a &quot;type&quot;; valid: %2</source>
        <translation>%1 需要 &quot;type&quot;；有效值：%2</translation>
    </message>
    <message>
        <source>%1: conv2d works on images, but its input is a flat vector of %2 values; give model.input as [channels, height, width] (MNIST: [1, 28, 28]) and keep image layers before any flatten, global_avgpool or linear</source>
        <translation>%1：conv2d 作用于图像，但它的输入是 %2 个值的扁平向量；请把 model.input 写成 [channels, height, width]（MNIST：[1, 28, 28]），并把图像层放在任何 flatten、global_avgpool 或 linear 之前</translation>
    </message>
    <message>
        <source>parallel.offload = activations and parallel.recompute = true both free the activations between forward and backward; choose one (offload = none, or recompute = false)</source>
        <translation>parallel.offload = activations 与 parallel.recompute = true 都会在前向与反向之间释放激活；请二选一（offload = none，或 recompute = false）</translation>
    </message>
    <message>
        <source>%1 = [%2] lists %3 stage starts but pp = %4 stages need %5 (parallel.boundaries: where each stage after the first begins)</source>
        <translation>%1 = [%2] 列出了 %3 个阶段起点，但 pp = %4 个阶段需要 %5 个（parallel.boundaries：第一个阶段之后每个阶段的起始层）</translation>
    </message>
    <message>
        <source>%1 = [%2] lists %3 stage starts but pp x chunks = %4 (pp = %5, chunks = %6) stages need %7 (parallel.boundaries: where each stage after the first begins)</source>
        <translation>%1 = [%2] 列出了 %3 个阶段起点，但 pp x chunks = %4（pp = %5，chunks = %6）个阶段需要 %7 个（parallel.boundaries：第一个阶段之后每个阶段的起始层）</translation>
    </message>
    <message>
        <source>%1 must be a rule (balanced, uniform, params, explicit) or an array of stage start indices like [2, 4], got %2</source>
        <translation>%1 必须是一种规则（balanced、uniform、params、explicit）或阶段起始层下标的数组，例如 [2, 4]，实际为 %2</translation>
    </message>
    <message>
        <source>parallel.sequence_parallel splits along the sequence, so it needs a Transformer (a model that starts with an embedding); set sequence_parallel = false</source>
        <translation>parallel.sequence_parallel 沿序列切分，因此需要 Transformer（以嵌入层开头的模型）；请设 sequence_parallel = false</translation>
    </message>
    <message>
        <source>%1 is missing; describe the network, e.g. &quot;model&quot;: {&quot;input&quot;: [%2], &quot;layers&quot;: [{&quot;type&quot;: &quot;linear&quot;, &quot;out&quot;: 10}]}</source>
        <translation>缺少 %1；请描述网络，例如 &quot;model&quot;: {&quot;input&quot;: [%2], &quot;layers&quot;: [{&quot;type&quot;: &quot;linear&quot;, &quot;out&quot;: 10}]}</translation>
    </message>
    <message>
        <source>%1 is missing; list the layers, e.g. [{&quot;type&quot;: &quot;linear&quot;, &quot;out&quot;: 10}]</source>
        <translation>缺少 %1；请列出各层，例如 [{&quot;type&quot;: &quot;linear&quot;, &quot;out&quot;: 10}]</translation>
    </message>
    <message>
        <source>%1: a transformer_block works on token sequences; start the model with an embedding ({&quot;type&quot;: &quot;embedding&quot;, &quot;vocab&quot;: 256, &quot;dim&quot;: 128}) and give model.input = [sequence length]</source>
        <translation>%1：transformer_block 作用于词元序列；请让模型以嵌入层开头（{&quot;type&quot;: &quot;embedding&quot;, &quot;vocab&quot;: 256, &quot;dim&quot;: 128}），并给出 model.input = [序列长度]</translation>
    </message>
    <message>
        <source>parallel.recompute = &quot;block&quot;: the %1 executor rebuilds a whole stage&apos;s activations before its backward, not one block at a time (the cpu backend does); set backend.type = cpu, or parallel.recompute = true, or simulate</source>
        <translation>parallel.recompute = &quot;block&quot;：%1 执行器在反向之前重建整个阶段的激活，而不是一次重建一个块（cpu 后端是这样做的）；请设 backend.type = cpu，或 parallel.recompute = true，或改为模拟</translation>
    </message>
    <message>
        <source>not a PipeLab run file (no &quot;format&quot;: &quot;pipelab-run&quot;); an experiment opens with File &gt; Open, a run saved with Runs &gt; Save the latest run… opens here</source>
        <translation>不是 PipeLab 运行文件（没有 &quot;format&quot;: &quot;pipelab-run&quot;）；实验请用 文件 &gt; 打开，用 运行记录 &gt; 保存最近一次运行… 保存的运行在这里打开</translation>
    </message>
    <message>
        <source>%1 has no &quot;%2&quot;</source>
        <translation>%1 缺少 &quot;%2&quot;</translation>
    </message>
    <message>
        <source>%1 lists %2 devices, but the experiment&apos;s plan has %3 (dp x tp x cp x pp); save the run again</source>
        <translation>%1 列出了 %2 台设备，但实验的划分有 %3 台（dp x tp x cp x pp）；请重新保存该运行</translation>
    </message>
    <message>
        <source>%1 is device %2; the list holds devices 0, 1, ... in order</source>
        <translation>%1 是设备 %2；列表应按顺序列出设备 0, 1, ...</translation>
    </message>
    <message>
        <source>%1 is %2, not the columns this version of PipeLab reads; save the run again with it</source>
        <translation>%1 为 %2，不是此版本 PipeLab 读取的列；请用此版本重新保存该运行</translation>
    </message>
    <message>
        <source>%1 must be an array, got %2</source>
        <translation>%1 必须是数组，实际为 %2</translation>
    </message>
    <message>
        <source>version %1 of the run format; this PipeLab reads version %2</source>
        <translation>运行文件格式的版本 %1；此 PipeLab 读取版本 %2</translation>
    </message>
    <message>
        <source>%1 (a run file holds the valid experiment it ran; save the run again)</source>
        <translation>%1（运行文件保存的是它运行过的有效实验；请重新保存该运行）</translation>
    </message>
    <message>
        <source>%1 file not found: %2</source>
        <translation>找不到 %1 文件：%2</translation>
    </message>
    <message>
        <source>%1 is a folder; give the %2&apos;s .json file</source>
        <translation>%1 是文件夹；请给出该 %2 的 .json 文件</translation>
    </message>
    <message>
        <source>cannot open %1 file %2</source>
        <translation>无法打开 %1 文件 %2</translation>
    </message>
    <message>
        <source>cannot read %1 file %2</source>
        <translation>无法读取 %1 文件 %2</translation>
    </message>
    <message>
        <source>cannot write %1 %2: cannot create %3</source>
        <translation>无法写入 %1 %2：无法创建 %3</translation>
    </message>
    <message>
        <source>cannot write %1 %2: %3</source>
        <translation>无法写入 %1 %2：%3</translation>
    </message>
    <message>
        <source>cannot write %1 %2</source>
        <translation>无法写入 %1 %2</translation>
    </message>
    <message>
        <source>cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <source>could not finish writing %1</source>
        <translation>未能写完 %1</translation>
    </message>
    <message>
        <source>run file not found: %1</source>
        <translation>找不到运行文件：%1</translation>
    </message>
    <message>
        <source>%1 is a folder; give a run&apos;s .json file</source>
        <translation>%1 是文件夹；请给出一次运行的 .json 文件</translation>
    </message>
    <message>
        <source>cannot open run file %1</source>
        <translation>无法打开运行文件 %1</translation>
    </message>
    <message>
        <source>cannot read run file %1</source>
        <translation>无法读取运行文件 %1</translation>
    </message>
    <message>
        <source>the JSON text is larger than the %1 MiB %2 may take; is this the right file?</source>
        <translation>JSON 文本超过了 %2 可接受的 %1 MiB；这是正确的文件吗？</translation>
    </message>
    <message>
        <source>the JSON is nested more than %1 levels deep; %2</source>
        <translation>JSON 的嵌套超过 %1 层；%2</translation>
    </message>
    <message>
        <source>%1 is not usable JSON: %2</source>
        <translation>%1 不是可用的 JSON：%2</translation>
    </message>
    <message>
        <source>%1 = %2 is too large</source>
        <translation>%1 = %2 太大</translation>
    </message>
    <message>
        <source>%1 = %2 is out of range</source>
        <translation>%1 = %2 超出范围</translation>
    </message>
    <message>
        <source>%1 has %2 entries (index 0..%3), not %4</source>
        <translation>%1 有 %2 项（下标 0..%3），没有 %4</translation>
    </message>
    <message>
        <source>%1 is a single value, it has no %2</source>
        <translation>%1 是单个值，没有 %2</translation>
    </message>
    <message>
        <source>override value %1 is not valid UTF-8 text; write it in UTF-8</source>
        <translation>覆盖值 %1 不是有效的 UTF-8 文本；请用 UTF-8 书写</translation>
    </message>
    <message>
        <source>override %1 must look like key.path=value, e.g. parallel.pp=4</source>
        <translation>覆盖项 %1 的格式必须是 key.path=value，例如 parallel.pp=4</translation>
    </message>
    <message>
        <source>%1 must be an object like {&quot;type&quot;: &quot;relu&quot;}, got %2</source>
        <translation>%1 必须是形如 {&quot;type&quot;: &quot;relu&quot;} 的对象，实际为 %2</translation>
    </message>
    <message>
        <source>model.input is missing and data.source %1 does not fix it; give the input shape per sample, e.g. &quot;input&quot;: [784]</source>
        <translation>缺少 model.input，且 data.source %1 无法确定它；请给出每个样本的输入形状，例如 &quot;input&quot;: [784]</translation>
    </message>
    <message>
        <source>model.layers must be an array of layers, got %1</source>
        <translation>model.layers 必须是层的数组，实际为 %1</translation>
    </message>
    <message>
        <source>model.layers: with repeats the model has more than %1 layers, more than PipeLab handles; use fewer layers or smaller repeats</source>
        <translation>model.layers：计入 repeat 后模型超过 %1 层，超出 PipeLab 的处理能力；请减少层数或减小 repeat</translation>
    </message>
    <message>
        <source>%1: a sequence set&apos;s samples are as long as the model&apos;s input; remove it and set model.input = [N] for N tokens per sample</source>
        <translation>%1：序列数据集的样本长度等于模型的输入长度；请删除该项，并设置 model.input = [N]（每个样本 N 个词元）</translation>
    </message>
    <message>
        <source>parallel.partition must be a rule (%1) or an array of stage start indices like [2, 4], got %2</source>
        <translation>parallel.partition 必须是一种规则（%1）或阶段起始下标的数组（如 [2, 4]），实际为 %2</translation>
    </message>
    <message>
        <source>sources must be a JSON object {&quot;figure&quot;: &quot;source&quot;, ...}</source>
        <translation>sources 必须是 JSON 对象 {&quot;figure&quot;: &quot;source&quot;, ...}</translation>
    </message>
    <message>
        <source>%1 is not a %2 of the hardware catalogue; valid: %3, or the path of a .json file that describes one (see hardware/README.md)</source>
        <translation>%1 不是硬件目录中的 %2；有效值：%3，或描述它的 .json 文件路径（见 hardware/README.md）</translation>
    </message>
    <message>
        <source>the device file %1 must end in .json, which is how an experiment&apos;s simulation.profile tells a file from a catalogue name</source>
        <translation>设备文件 %1 必须以 .json 结尾，实验的 simulation.profile 正是据此区分文件与目录中的名称</translation>
    </message>
    <message>
        <source>data.classes = 0 makes &apos;teacher&apos; a regression set (one target per sample); it needs model.loss = mse, or set data.classes &gt;= 2</source>
        <translation>data.classes = 0 使 &apos;teacher&apos; 成为回归数据集（每个样本一个目标值）；它需要 model.loss = mse，或设置 data.classes &gt;= 2</translation>
    </message>
    <message>
        <source>data.source &apos;%1&apos; gives token sequences, which need a model that starts with an embedding layer; add {&quot;type&quot;: &quot;embedding&quot;, &quot;vocab&quot;: ..., &quot;dim&quot;: ...} as model.layers[0]</source>
        <translation>data.source &apos;%1&apos; 提供词元序列，需要以嵌入层开头的模型；请把 {&quot;type&quot;: &quot;embedding&quot;, &quot;vocab&quot;: ..., &quot;dim&quot;: ...} 加为 model.layers[0]</translation>
    </message>
    <message>
        <source>the model outputs %1 values but data.source &apos;%2&apos; has %3 target; set the last linear layer&apos;s out to %4</source>
        <translation>模型输出 %1 个值，但 data.source &apos;%2&apos; 有 %3 个目标值；请把最后一个线性层的 out 设为 %4</translation>
    </message>
    <message>
        <source>parallel.update = async with parallel.schedule = %1 is contradictory: update = async means asynchronous data parallelism through a parameter server, while %2 already updates asynchronously inside the pipeline with its own weight versions; use update = sync with %3, or a synchronous schedule (e.g. 1f1b) with update = async</source>
        <translation>parallel.update = async 与 parallel.schedule = %1 相互矛盾：update = async 表示通过参数服务器进行异步数据并行，而 %2 已在流水线内部以自己的权重版本异步更新；请对 %3 使用 update = sync，或对 update = async 使用同步调度（如 1f1b）</translation>
    </message>
    <message>
        <source>a batchnorm with sync: true sums its statistics over the replicas at every micro-batch, which asynchronous data parallel cannot wait for; set parallel.update = sync, or sync: false on the batch norms</source>
        <translation>sync: true 的 batchnorm 在每个微批次都要跨副本汇总统计量，异步数据并行无法等待；请设置 parallel.update = sync，或在批归一化层上设置 sync: false</translation>
    </message>
    <message>
        <source>simulation.cluster.node %1 holds %2 devices but simulation.profile is %3; set simulation.profile to %4 or choose a node type that holds %5</source>
        <translation>simulation.cluster.node %1 装有 %2 设备，但 simulation.profile 是 %3；请把 simulation.profile 设为 %4，或选择装有 %5 的节点类型</translation>
    </message>
    <message>
        <source>simulation.cluster has %1 nodes x %2 devices = %3 but the run needs %4 (dp x tp x cp x pp); raise simulation.cluster.nodes to %5 or set it to 0 (as many as needed)</source>
        <translation>simulation.cluster 有 %1 个节点 x %2 个设备 = %3，但运行需要 %4（dp x tp x cp x pp）；请把 simulation.cluster.nodes 提高到 %5，或设为 0（按需使用节点）</translation>
    </message>
    <message>
        <source>simulation.cluster has %1 node x %2 devices = %3 but the run needs %4 (dp x tp x cp x pp); raise simulation.cluster.nodes to %5 or set it to 0 (as many as needed)</source>
        <translation>simulation.cluster 有 %1 个节点 x %2 个设备 = %3，但运行需要 %4（dp x tp x cp x pp）；请把 simulation.cluster.nodes 提高到 %5，或设为 0（按需使用节点）</translation>
    </message>
    <message>
        <source>backend.type = %1 does not run across processes yet; use backend.type = cpu (or cuda) under mpirun</source>
        <translation>backend.type = %1 尚不支持跨进程运行；请在 mpirun 下使用 backend.type = cpu（或 cuda）</translation>
    </message>
    <message>
        <source>backend.type = cuda, but this build has no CUDA backend; use backend.type = cpu</source>
        <translation>backend.type = cuda，但此构建没有 CUDA 后端；请使用 backend.type = cpu</translation>
    </message>
    <message>
        <source>backend.type = %1 is not a backend; registered: %2</source>
        <translation>backend.type = %1 不是后端；已注册：%2</translation>
    </message>
    <message>
        <source>steps = %1 must be &gt;= 0 (0 runs training.steps)</source>
        <translation>steps = %1 必须 &gt;= 0（0 表示运行 training.steps 步）</translation>
    </message>
    <message>
        <source>backend.type = %1: Transformers train on the cpu and cuda backends; set backend.type = cpu or cuda, or simulate this model</source>
        <translation>backend.type = %1：Transformer 在 cpu 和 cuda 后端上训练；请设置 backend.type = cpu 或 cuda，或对该模型进行模拟</translation>
    </message>
    <message>
        <source>model.loss = %1: a Transformer trains on next-token cross-entropy; set model.loss = %2</source>
        <translation>model.loss = %1：Transformer 以下一个词元的交叉熵训练；请设置 model.loss = %2</translation>
    </message>
    <message>
        <source>training.precision = %1: the %2 executor trains in fp32 only (the simulator predicts bf16-mixed); set training.precision = fp32 to train, or backend.type = cuda</source>
        <translation>training.precision = %1：%2 执行器只以 fp32 训练（模拟器可预测 bf16-mixed）；训练时请设置 training.precision = fp32，或 backend.type = cuda</translation>
    </message>
    <message>
        <source>%1 routes tokens to experts, which context parallelism does not train yet; set parallel.cp = 1, or simulate</source>
        <translation>%1 把词元路由给专家，上下文并行目前还不能训练这种层；请设置 parallel.cp = 1，或只做模拟</translation>
    </message>
    <message>
        <source>%1 is %2: a Transformer starts with an embedding; make model.layers[0] an embedding</source>
        <translation>%1 是 %2：Transformer 以嵌入层开头；请把 model.layers[0] 设为嵌入层</translation>
    </message>
    <message>
        <source>%1 is %2: convolutional layers and batch norm train on the cpu and cuda backends; set backend.type = cpu or cuda, or simulate this model</source>
        <translation>%1 是 %2：卷积层和批归一化在 cpu 和 cuda 后端上训练；请设置 backend.type = cpu 或 cuda，或对该模型进行模拟</translation>
    </message>
    <message>
        <source>%1 is moe: Mixture-of-Experts layers train on the cpu and cuda backends; set backend.type = cpu or cuda, or simulate this model</source>
        <translation>%1 是 moe：混合专家层在 cpu 和 cuda 后端上训练；请设置 backend.type = cpu 或 cuda，或对该模型进行模拟</translation>
    </message>
    <message>
        <source>%1 is a transformer_block with experts: Mixture-of-Experts layers train on the cpu and cuda backends; set backend.type = cpu or cuda, or simulate this model</source>
        <translation>%1 是带专家的 transformer_block：混合专家层在 cpu 和 cuda 后端上训练；请设置 backend.type = cpu 或 cuda，或对该模型进行模拟</translation>
    </message>
    <message>
        <source>model.input gives %1 features but %2 has %3; set model.input to [%4]</source>
        <translation>model.input 给出 %1 个特征，但 %2 有 %3 个；请把 model.input 设为 [%4]</translation>
    </message>
    <message>
        <source>the model outputs %1 values but %2 has %3 classes; set the last linear layer&apos;s out to %4</source>
        <translation>模型输出 %1 个值，但 %2 有 %3 个类别；请把最后一个线性层的 out 设为 %4</translation>
    </message>
    <message>
        <source>%1 is a regression set (no class labels), which model.loss = cross-entropy cannot train; use model.loss = mse</source>
        <translation>%1 是回归数据集（没有类别标签），model.loss = cross-entropy 无法训练它；请使用 model.loss = mse</translation>
    </message>
    <message>
        <source>the model outputs %1 values but %2 has %3 targets per sample; set the last linear layer&apos;s out to %4</source>
        <translation>模型输出 %1 个值，但 %2 每个样本有 %3 个目标值；请把最后一个线性层的 out 设为 %4</translation>
    </message>
    <message>
        <source>training.batch_size = %1 must be a multiple of parallel.dp x parallel.microbatches = %2 x %3</source>
        <translation>training.batch_size = %1 必须是 parallel.dp x parallel.microbatches = %2 x %3 的倍数</translation>
    </message>
    <message>
        <source>throughput needs a device: simulation.profile = unit has no FLOP/s; name a device such as h100</source>
        <translation>吞吐量需要一种设备：simulation.profile = unit 没有 FLOP/s；请指定设备，例如 h100</translation>
    </message>
    <message>
        <source>DAPPLE&apos;s planner would try %1 (pp, dp, micro-batch) choices; plan for fewer devices, use a batch size with fewer divisors, or use --planner pipedream</source>
        <translation>DAPPLE 规划器将尝试 %1 种（pp, dp, 微批次）组合；请为更少的设备规划、使用约数更少的批大小，或使用 --planner pipedream</translation>
    </message>
    <message>
        <source>no pp, dp and micro-batch count splits training.batch_size = %1 over %2 devices into a valid experiment; change the batch size or the model</source>
        <translation>没有任何 pp、dp 与微批次数的组合能把 training.batch_size = %1 分到 %2 个设备上并得到有效实验；请修改批大小或模型</translation>
    </message>
    <message>
        <source>only a sequence model (an embedding, then transformer blocks) has a Megatron-LM or torchtitan equivalent; this model starts with a %1 layer</source>
        <translation>只有序列模型（先是嵌入层，然后是 Transformer 块）才有 Megatron-LM 或 torchtitan 的对应配置；此模型以 %1 层开头</translation>
    </message>
    <message>
        <source>layer %1 (%2) has no place in a Megatron-LM or torchtitan GPT, which is an embedding, transformer blocks, a final norm and the output layer</source>
        <translation>层 %1（%2）在 Megatron-LM 或 torchtitan 的 GPT 中没有对应位置，GPT 由嵌入层、Transformer 块、最终归一化层和输出层组成</translation>
    </message>
    <message>
        <source>the model has no transformer_block; Megatron-LM and torchtitan train GPTs of transformer blocks</source>
        <translation>模型没有 transformer_block；Megatron-LM 和 torchtitan 训练由 Transformer 块组成的 GPT</translation>
    </message>
    <message>
        <source>PipeDream&apos;s planner would search too long over %1 layers and %2 device groups; plan for at most %3 groups of parallel.tp devices, raise parallel.tp, or use --planner dapple</source>
        <translation>PipeDream 规划器在 %1 层和 %2 个设备组上搜索会耗时过长；请最多为 %3 组 parallel.tp 个设备规划、提高 parallel.tp，或使用 --planner dapple</translation>
    </message>
    <message>
        <source>the plan needs at least 1 device, got %1; give the number of devices to plan for</source>
        <translation>规划至少需要 1 个设备，实际为 %1；请给出要规划的设备数</translation>
    </message>
    <message>
        <source>%1 devices is not a multiple of %2 (each stage replica takes tp x cp devices); use a multiple of %3 or change tp or cp</source>
        <translation>%1 个设备不是 %2 的倍数（每个阶段副本占用 tp x cp 个设备）；请使用 %3 的倍数，或修改 tp 或 cp</translation>
    </message>
    <message>
        <source>%1 devices is not a multiple of %2 (each stage replica takes tp devices); use a multiple of %3 or change parallel.tp</source>
        <translation>%1 个设备不是 %2 的倍数（每个阶段副本占用 tp 个设备）；请使用 %3 的倍数，或修改 parallel.tp</translation>
    </message>
    <message>
        <source>memory per device must be above 0 bytes, e.g. 16GiB</source>
        <translation>每个设备的内存必须大于 0 字节，例如 16GiB</translation>
    </message>
    <message>
        <source>the link bandwidth must be a number of bytes per second above 0, e.g. 450GB</source>
        <translation>链路带宽必须是大于 0 的每秒字节数，例如 450GB</translation>
    </message>
    <message>
        <source>simulation.profile = unit counts no bytes or seconds, so there is nothing to plan with; set simulation.profile to cpu-core, h100 or h200</source>
        <translation>simulation.profile = unit 不计字节和秒数，因此无从规划；请把 simulation.profile 设为 cpu-core、h100 或 h200</translation>
    </message>
    <message>
        <source>the search needs at least 1 device, got %1</source>
        <translation>搜索至少需要 1 个设备，实际为 %1</translation>
    </message>
    <message>
        <source>memory per device must be above 0 bytes, e.g. 80GB</source>
        <translation>每个设备的内存必须大于 0 字节，例如 80GB</translation>
    </message>
    <message>
        <source>the memory margin is a share of each device&apos;s memory kept free, at least 0 and below 1 (e.g. 0.1)</source>
        <translation>内存余量是每个设备保留空闲的内存比例，至少为 0 且小于 1（例如 0.1）</translation>
    </message>
    <message>
        <source>the search must return at least 1 plan</source>
        <translation>搜索必须至少返回 1 个方案</translation>
    </message>
    <message>
        <source>a node must hold at least 1 device</source>
        <translation>一个节点必须至少容纳 1 个设备</translation>
    </message>
    <message>
        <source>simulation.profile = unit counts no bytes or seconds, so there is nothing to search with; set simulation.profile to a device such as h100</source>
        <translation>simulation.profile = unit 不计字节和秒数，因此无从搜索；请把 simulation.profile 设为某种设备，例如 h100</translation>
    </message>
    <message>
        <source>the search covers synchronous training; set parallel.update = sync and a synchronous schedule (e.g. 1f1b) first</source>
        <translation>搜索只涵盖同步训练；请先设置 parallel.update = sync 并选择同步调度（如 1f1b）</translation>
    </message>
    <message>
        <source>the search was stopped before it finished</source>
        <translation>搜索在完成前被停止</translation>
    </message>
    <message>
        <source>fix the experiment first: %1</source>
        <translation>请先修正实验：%1</translation>
    </message>
    <message>
        <source>the model has %1 layers; the planners search every layer range and take at most %2 (use repeat to merge layers into fewer, larger ones)</source>
        <translation>模型有 %1 层；规划器会搜索每个层区间，最多接受 %2 层（可用 repeat 把多层合并为更少、更大的层）</translation>
    </message>
    <message>
        <source>no split of the experiment fits %1 usable per device, so there is nothing to write or export; give more devices, more memory per device or a smaller --margin</source>
        <translation>实验的任何切分都放不进每个设备可用的 %1，因此没有可写出或导出的内容；请提供更多设备、每个设备更多内存，或更小的 --margin</translation>
    </message>
    <message>
        <source>calibration run failed: %1</source>
        <translation>校准运行失败：%1</translation>
    </message>
    <message>
        <source>calibration needs at least one run file</source>
        <translation>校准至少需要一个运行文件</translation>
    </message>
    <message>
        <source>run &apos;%1&apos; was %2, not measured: calibrate from runs that trained (pipelab-cli train --save-run, or the app&apos;s Runs &gt; Save)</source>
        <translation>运行 &apos;%1&apos; 的来源是 %2，而非实测：请用实际训练过的运行来校准（pipelab-cli train --save-run，或应用中的 Runs &gt; Save）</translation>
    </message>
    <message>
        <source>run &apos;%1&apos; recorded no steps to calibrate from</source>
        <translation>运行 &apos;%1&apos; 没有记录可用于校准的步骤</translation>
    </message>
    <message>
        <source>batch size %1 is too small; use at least 1</source>
        <translation>批大小 %1 太小；请至少用 1</translation>
    </message>
    <message>
        <source>no samples to make batches from</source>
        <translation>没有可组成批次的样本</translation>
    </message>
    <message>
        <source>batch size %1 is larger than its %2 samples; lower the batch size or use more samples</source>
        <translation>批大小 %1 大于其 %2 个样本；请减小批大小或使用更多样本</translation>
    </message>
    <message>
        <source>line %1, column %2</source>
        <translation>第 %1 行第 %2 列</translation>
    </message>
    <message>
        <source>empty cell; every feature needs a number</source>
        <translation>单元格为空；每个特征都需要一个数值</translation>
    </message>
    <message>
        <source>empty label cell</source>
        <translation>标签单元格为空</translation>
    </message>
    <message>
        <source>label %1 is not a number</source>
        <translation>标签 %1 不是数值</translation>
    </message>
    <message>
        <source>label %1 is negative; labels are class numbers 0, 1, 2, ...</source>
        <translation>标签 %1 为负数；标签是类别编号 0、1、2……</translation>
    </message>
    <message>
        <source>label %1 is not a whole number</source>
        <translation>标签 %1 不是整数</translation>
    </message>
    <message>
        <source>label %1 is too large (at most %2)</source>
        <translation>标签 %1 太大（最多 %2）</translation>
    </message>
    <message>
        <source>%1 is not a finite 32-bit number</source>
        <translation>%1 不是有限的 32 位数值</translation>
    </message>
    <message>
        <source>%1 is not a number</source>
        <translation>%1 不是数值</translation>
    </message>
    <message>
        <source>file is empty</source>
        <translation>文件为空</translation>
    </message>
    <message>
        <source>line %1 has 1 cell; rows need a label column and at least one feature column (separated by commas)</source>
        <translation>第 %1 行只有 1 个单元格；每行需要一个标签列和至少一个特征列（以逗号分隔）</translation>
    </message>
    <message>
        <source>label column %1 is outside the rows&apos; %2 cells</source>
        <translation>标签列 %1 超出了每行的 %2 个单元格</translation>
    </message>
    <message>
        <source>line %1 has %2 cells but line %3 has %4</source>
        <translation>第 %1 行有 %2 个单元格，但第 %3 行有 %4 个</translation>
    </message>
    <message>
        <source>holds a header row but no data rows</source>
        <translation>只有表头行，没有数据行</translation>
    </message>
    <message>
        <source>holds no data rows</source>
        <translation>没有数据行</translation>
    </message>
    <message>
        <source>cannot start gzip decompression (zlib out of memory)</source>
        <translation>无法开始 gzip 解压（zlib 内存不足）</translation>
    </message>
    <message>
        <source>decompresses to more than %1, more than PipeLab reads from one data file; use a smaller file</source>
        <translation>解压后超过 %1，超出 PipeLab 从单个数据文件读取的上限；请使用更小的文件</translation>
    </message>
    <message>
        <source>corrupted gzip: %1 unexpected bytes after the compressed data</source>
        <translation>gzip 已损坏：压缩数据之后有 %1 个多余的字节</translation>
    </message>
    <message>
        <source>truncated gzip: the compressed data ends early (%1 bytes read)</source>
        <translation>gzip 被截断：压缩数据提前结束（已读取 %1 字节）</translation>
    </message>
    <message>
        <source>corrupted gzip data (%1)</source>
        <translation>gzip 数据已损坏（%1）</translation>
    </message>
    <message>
        <source>out of memory while decompressing</source>
        <translation>解压时内存不足</translation>
    </message>
    <message>
        <source>gzip decompression failed (zlib error %1)</source>
        <translation>gzip 解压失败（zlib 错误 %1）</translation>
    </message>
    <message>
        <source>read error</source>
        <translation>读取出错</translation>
    </message>
    <message>
        <source>changed while it was being read: it held %1 bytes when opened but only %2 could be read (is it still being written or downloaded?); try again when it is complete</source>
        <translation>读取期间文件发生了变化：打开时有 %1 字节，但只读到 %2 字节（是否仍在写入或下载？）；请等它完成后再试</translation>
    </message>
    <message>
        <source>changed while it was being read: it grew past the %1 bytes it held when opened (is it still being written or downloaded?); try again when it is complete</source>
        <translation>读取期间文件发生了变化：它已超过打开时的 %1 字节（是否仍在写入或下载？）；请等它完成后再试</translation>
    </message>
    <message>
        <source>is a folder, expected a file</source>
        <translation>是文件夹，这里需要文件</translation>
    </message>
    <message>
        <source>is not a regular file (a device, pipe or socket); give a data file</source>
        <translation>不是普通文件（而是设备、管道或套接字）；请给出数据文件</translation>
    </message>
    <message>
        <source>cannot read its size (%1)</source>
        <translation>无法读取其大小（%1）</translation>
    </message>
    <message>
        <source>holds %1 bytes, more than the %2 PipeLab reads from one data file; use a smaller file</source>
        <translation>有 %1 字节，超过 PipeLab 从单个数据文件读取的上限 %2；请使用更小的文件</translation>
    </message>
    <message>
        <source>data.path is empty; name the folder that holds the IDX files</source>
        <translation>data.path 为空；请指定存放 IDX 文件的文件夹</translation>
    </message>
    <message>
        <source>folder not found</source>
        <translation>找不到文件夹</translation>
    </message>
    <message>
        <source>is a file; %1 needs the folder that holds the IDX files</source>
        <translation>是文件；%1 需要的是存放 IDX 文件的文件夹</translation>
    </message>
    <message>
        <source>cannot list the folder (%1)</source>
        <translation>无法列出文件夹的内容（%1）</translation>
    </message>
    <message>
        <source>holds no %1 IDX files; expected t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (and the train-* pair), raw or .gz; download them with: datasets/download.sh %2 %3</source>
        <translation>没有 %1 的 IDX 文件；需要 t10k-images-idx3-ubyte.gz 和 t10k-labels-idx1-ubyte.gz（以及 train-* 这一对），未压缩或 .gz 均可；可用以下命令下载：datasets/download.sh %2 %3</translation>
    </message>
    <message>
        <source>holds no %1 IDX files; expected t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (and the train-* pair), raw or .gz</source>
        <translation>没有 %1 的 IDX 文件；需要 t10k-images-idx3-ubyte.gz 和 t10k-labels-idx1-ubyte.gz（以及 train-* 这一对），未压缩或 .gz 均可</translation>
    </message>
    <message>
        <source>no matching labels file %1labels-idx1-ubyte(.gz) in %2</source>
        <translation>在 %2 中找不到与之配对的标签文件 %1labels-idx1-ubyte(.gz)</translation>
    </message>
    <message>
        <source>no matching images file %1images-idx3-ubyte(.gz) in %2</source>
        <translation>在 %2 中找不到与之配对的图像文件 %1images-idx3-ubyte(.gz)</translation>
    </message>
    <message>
        <source>holds %1 IDX file pairs and cannot tell which to use; keep one train-* pair and one t10k-* (or test-*) pair</source>
        <translation>有 %1 对 IDX 文件，无法判断该用哪一对；请只保留一对 train-* 和一对 t10k-*（或 test-*）</translation>
    </message>
    <message>
        <source>truncated: an IDX file starts with a 4-byte magic number but the file holds %1 bytes</source>
        <translation>文件被截断：IDX 文件以 4 字节的魔数开头，但该文件只有 %1 字节</translation>
    </message>
    <message>
        <source>wrong magic number %1: expected %2 (IDX images of unsigned bytes); this is not an IDX file</source>
        <translation>魔数 %1 不对：应为 %2（无符号字节的 IDX 图像）；这不是 IDX 文件</translation>
    </message>
    <message>
        <source>wrong magic number %1: expected %2 (IDX labels of unsigned bytes); this is not an IDX file</source>
        <translation>魔数 %1 不对：应为 %2（无符号字节的 IDX 标签）；这不是 IDX 文件</translation>
    </message>
    <message>
        <source>wrong magic number %1: expected %2 (IDX images of unsigned bytes); values of type %3 are not supported</source>
        <translation>魔数 %1 不对：应为 %2（无符号字节的 IDX 图像）；不支持类型为 %3 的值</translation>
    </message>
    <message>
        <source>wrong magic number %1: expected %2 (IDX labels of unsigned bytes); values of type %3 are not supported</source>
        <translation>魔数 %1 不对：应为 %2（无符号字节的 IDX 标签）；不支持类型为 %3 的值</translation>
    </message>
    <message>
        <source>wrong magic number %1: expected %2 (IDX images of unsigned bytes); is this a labels file?</source>
        <translation>魔数 %1 不对：应为 %2（无符号字节的 IDX 图像）；这是标签文件吗？</translation>
    </message>
    <message>
        <source>wrong magic number %1: expected %2 (IDX labels of unsigned bytes); is this an images file?</source>
        <translation>魔数 %1 不对：应为 %2（无符号字节的 IDX 标签）；这是图像文件吗？</translation>
    </message>
    <message>
        <source>truncated: the header of a %1-dimensional IDX file needs %2 bytes but the file holds %3</source>
        <translation>文件被截断：%1 维 IDX 文件的文件头需要 %2 字节，但该文件只有 %3 字节</translation>
    </message>
    <message>
        <source>truncated: header says %1 images of %2 (%3 bytes) but the file holds %4</source>
        <translation>文件被截断：文件头声明 %1 张 %2 的图像（%3 字节），但该文件只有 %4 字节</translation>
    </message>
    <message>
        <source>truncated: header says %1 images of %2 but the file holds %3 bytes of data</source>
        <translation>文件被截断：文件头声明 %1 张 %2 的图像，但该文件只有 %3 字节数据</translation>
    </message>
    <message>
        <source>truncated: header says %1 labels but the file holds %2</source>
        <translation>文件被截断：文件头声明 %1 个标签，但该文件只有 %2 字节</translation>
    </message>
    <message>
        <source>too long: header says %1 images of %2 (%3 bytes) but the file holds %4; the file is damaged or not what it claims</source>
        <translation>文件过长：文件头声明 %1 张 %2 的图像（%3 字节），但该文件有 %4 字节；文件已损坏，或并非它所声称的内容</translation>
    </message>
    <message>
        <source>too long: header says %1 labels but the file holds %2; the file is damaged or not what it claims</source>
        <translation>文件过长：文件头声明 %1 个标签，但该文件有 %2 字节；文件已损坏，或并非它所声称的内容</translation>
    </message>
    <message>
        <source>truncated: header says %1 but the file holds %2 bytes of data</source>
        <translation>文件被截断：文件头声明 %1，但该文件只有 %2 字节数据</translation>
    </message>
    <message>
        <source>truncated: header says %1 but the file holds %2</source>
        <translation>文件被截断：文件头声明 %1，但该文件只有 %2 字节</translation>
    </message>
    <message>
        <source>too long: header says %1 but the file holds %2; the file is damaged or not what it claims</source>
        <translation>文件过长：文件头声明 %1，但该文件有 %2 字节；文件已损坏，或并非它所声称的内容</translation>
    </message>
    <message>
        <source>header says 0 images; the file holds no data</source>
        <translation>文件头声明 0 张图像；文件中没有数据</translation>
    </message>
    <message>
        <source>header says images of %1 pixels, an empty shape</source>
        <translation>文件头声明图像为 %1 像素，这是空的形状</translation>
    </message>
    <message>
        <source>header says 0 labels; the file holds no data</source>
        <translation>文件头声明 0 个标签；文件中没有数据</translation>
    </message>
    <message>
        <source>holds %1 labels but %2 holds %3 images; the two files must come from the same set</source>
        <translation>有 %1 个标签，但 %2 有 %3 张图像；两个文件必须来自同一数据集</translation>
    </message>
    <message>
        <source>images are %1 but %2 images are %3</source>
        <translation>图像为 %1，但 %2 的图像为 %3</translation>
    </message>
    <message>
        <source>label %1 at index %2 is out of range: %3 labels are 0..%4</source>
        <translation>索引 %2 处的标签 %1 超出范围：%3 的标签为 0..%4</translation>
    </message>
    <message>
        <source>images have %1 pixels but %2 has %3</source>
        <translation>图像有 %1 个像素，但 %2 的图像有 %3 个</translation>
    </message>
    <message>
        <source>data.path is empty; name the CSV file</source>
        <translation>data.path 为空；请指定 CSV 文件</translation>
    </message>
    <message>
        <source>unknown data.source %1: valid sources are %2</source>
        <translation>未知的 data.source %1：可用的数据源有 %2</translation>
    </message>
    <message>
        <source>data.normalization is &apos;%1&apos;, but a sequence set&apos;s inputs are token ids, which must not be scaled; use none</source>
        <translation>data.normalization 为 &apos;%1&apos;，但序列数据集的输入是词元 id，不能缩放；请使用 none</translation>
    </message>
    <message>
        <source>data.limit %1 leaves no training sample after validation; raise it</source>
        <translation>data.limit %1 在留出验证样本后没有剩下训练样本；请调大它</translation>
    </message>
    <message>
        <source>data.samples is %1; a sequence task needs at least 1 sample</source>
        <translation>data.samples 为 %1；序列任务至少需要 1 个样本</translation>
    </message>
    <message>
        <source>data.vocab is %1; %2 needs at least %3 %4; raise data.vocab</source>
        <translation>data.vocab 为 %1；%2 至少需要 %3 %4；请调大 data.vocab</translation>
    </message>
    <message>
        <source>data.vocab is %1; a sequence task uses at most %2 tokens; lower data.vocab</source>
        <translation>data.vocab 为 %1；序列任务最多使用 %2 个词元；请调小 data.vocab</translation>
    </message>
    <message>
        <source>data.sequence_length is %1; %2 needs at least %3 %4; raise data.sequence_length</source>
        <translation>data.sequence_length 为 %1；%2 至少需要 %3 %4；请调大 data.sequence_length</translation>
    </message>
    <message>
        <source>%1 samples x %2 tokens is too large (at most %3 tokens); lower data.samples or data.sequence_length</source>
        <translation>%1 个样本 × %2 个词元太大（最多 %3 个词元）；请调小 data.samples 或 data.sequence_length</translation>
    </message>
    <message>
        <source>unknown sequence task %1: valid ones are %2</source>
        <translation>未知的序列任务 %1：可用的有 %2</translation>
    </message>
    <message>
        <source>data.validation_fraction is %1; use a value in [0, 1), e.g. 0.2 to hold out a fifth of the samples</source>
        <translation>data.validation_fraction 为 %1；请使用 [0, 1) 内的值，例如 0.2 表示留出五分之一的样本</translation>
    </message>
    <message>
        <source>data.validation_fraction %1 leaves no training sample out of %2; lower it or use more samples</source>
        <translation>data.validation_fraction %1 使 %2 个样本中没有剩下训练样本；请调小它或使用更多样本</translation>
    </message>
    <message>
        <source>data.samples is %1; a synthetic set needs at least 1 sample</source>
        <translation>data.samples 为 %1；合成数据集至少需要 1 个样本</translation>
    </message>
    <message>
        <source>data.noise is %1; use a finite value &gt;= 0</source>
        <translation>data.noise 为 %1；请使用 &gt;= 0 的有限值</translation>
    </message>
    <message>
        <source>%1 samples x %2 features is too large (at most %3 values); lower data.samples</source>
        <translation>%1 个样本 × %2 个特征太大（最多 %3 个值）；请调小 data.samples</translation>
    </message>
    <message>
        <source>data.classes is %1; use 2..%2 (or 0 for a regression set)</source>
        <translation>data.classes 为 %1；请使用 2..%2（回归数据集用 0）</translation>
    </message>
    <message>
        <source>data.classes is %1; use 2..%2</source>
        <translation>data.classes 为 %1；请使用 2..%2</translation>
    </message>
    <message>
        <source>data.features is %1; use at least 1</source>
        <translation>data.features 为 %1；请至少用 1</translation>
    </message>
    <message>
        <source>unknown synthetic data set %1: valid ones are %2</source>
        <translation>未知的合成数据集 %1：可用的有 %2</translation>
    </message>
    <message>
        <source>data.sequence_length is %1; use at least 1 character per sample</source>
        <translation>data.sequence_length 为 %1；每个样本请至少用 1 个字符</translation>
    </message>
    <message>
        <source>data.sequence_length is %1; use at most %2</source>
        <translation>data.sequence_length 为 %1；请最多用 %2</translation>
    </message>
    <message>
        <source>not valid UTF-8 at byte %1 (%2); a text source must be UTF-8: convert the file to UTF-8</source>
        <translation>第 %1 字节处不是有效的 UTF-8（%2）；文本数据源必须是 UTF-8：请把文件转换为 UTF-8</translation>
    </message>
    <message>
        <source>holds %1, more than the %2 PipeLab reads as text; use a shorter text</source>
        <translation>有 %1，超过 PipeLab 作为文本读取的上限 %2；请使用更短的文本</translation>
    </message>
    <message>
        <source>is empty; a text source needs at least %1 characters of UTF-8 text</source>
        <translation>为空；文本数据源至少需要 %1 个 UTF-8 文本字符</translation>
    </message>
    <message>
        <source>holds %1; one sample needs %2; use a longer text or lower data.sequence_length</source>
        <translation>有 %1；一个样本需要 %2；请使用更长的文本或调小 data.sequence_length</translation>
    </message>
    <message>
        <source>its training part (the first %1) is shorter than one sample of %2; lower data.validation_fraction or data.sequence_length</source>
        <translation>其训练部分（前 %1）比一个 %2 的样本还短；请调小 data.validation_fraction 或 data.sequence_length</translation>
    </message>
    <message>
        <source>its validation part (the last %1) is shorter than one sample of %2; raise data.validation_fraction, lower data.sequence_length, or use 0 for no validation</source>
        <translation>其验证部分（后 %1）比一个 %2 的样本还短；请调大 data.validation_fraction、调小 data.sequence_length，或用 0 表示不做验证</translation>
    </message>
    <message>
        <source>makes %1 samples of %2 tokens, more than the %3 tokens a sequence set holds; raise data.stride or use a shorter text</source>
        <translation>会生成 %1 个 %2 词元的样本，超过序列数据集最多容纳的 %3 个词元；请调大 data.stride 或使用更短的文本</translation>
    </message>
    <message>
        <source>data.path is empty; name a UTF-8 text file, such as the LICENSE file at the top of the PipeLab sources</source>
        <translation>data.path 为空；请指定一个 UTF-8 文本文件，例如 PipeLab 源码顶层的 LICENSE 文件</translation>
    </message>
    <message>
        <source>%1 = %2 is not a finite number</source>
        <translation>%1 = %2 不是有限数值</translation>
    </message>
    <message>
        <source>%1 must be an array of %2 values, got %3</source>
        <translation>%1 必须是含 %2 个值的数组，实际为 %3</translation>
    </message>
    <message>
        <source>%1 = %2 is not an op kind</source>
        <translation>%1 = %2 不是算子类型</translation>
    </message>
    <message>
        <source>%1 = %2 is not a group; valid: none, tensor_parallel, data_parallel, expert_parallel, context_parallel</source>
        <translation>%1 = %2 不是通信组；可用：none、tensor_parallel、data_parallel、expert_parallel、context_parallel</translation>
    </message>
    <message>
        <source>%1 ends before it begins</source>
        <translation>%1 的结束时间早于开始时间</translation>
    </message>
    <message>
        <source>%1 = %2 is not a byte count (0 to 2^53)</source>
        <translation>%1 = %2 不是字节数（0 到 2^53）</translation>
    </message>
    <message>
        <source>%1 has %2 routed counts but %3 dropped ones (one of each per expert)</source>
        <translation>%1 有 %2 个路由计数，但有 %3 个丢弃计数（每个专家各一个）</translation>
    </message>
    <message>
        <source>trace.devices lists %1 devices, more than %2</source>
        <translation>trace.devices 列出了 %1 个设备，多于 %2</translation>
    </message>
    <message>
        <source>%1 is %2 bytes long, more than the %3 a run file&apos;s names and labels may take; shorten it</source>
        <translation>%1 长 %2 字节，超过运行文件中名称和标签允许的 %3 字节；请缩短它</translation>
    </message>
    <message>
        <source>%1 is on device %2, but the run has %3 (0 to %4)</source>
        <translation>%1 在设备 %2 上，但该运行只有 %3 个设备（0 到 %4）</translation>
    </message>
    <message>
        <source>search space %1</source>
        <translation>搜索空间 %1</translation>
    </message>
    <message>
        <source>write dimension=value,value, e.g. cp=1 or schedule=1f1b,zb-v</source>
        <translation>请写成 维度=值,值，例如 cp=1 或 schedule=1f1b,zb-v</translation>
    </message>
    <message>
        <source>%1 is not a whole number from 0 to 3</source>
        <translation>%1 不是 0 到 3 之间的整数</translation>
    </message>
    <message>
        <source>%1 is not a whole number of at least 1</source>
        <translation>%1 不是至少为 1 的整数</translation>
    </message>
    <message>
        <source>%1 is not a schedule the search tries; valid: 1f1b, interleaved-1f1b, zb-h1, zb-v, dualpipev</source>
        <translation>%1 不是搜索会尝试的调度；可用：1f1b、interleaved-1f1b、zb-h1、zb-v、dualpipev</translation>
    </message>
    <message>
        <source>%1 is not an offload; valid: none, activations, optimizer</source>
        <translation>%1 不是卸载方式；可用：none、activations、optimizer</translation>
    </message>
    <message>
        <source>%1 is not a recompute policy; valid: none, selective, full, block</source>
        <translation>%1 不是重计算策略；可用：none、selective、full、block</translation>
    </message>
    <message>
        <source>no dimension %1; valid: tp, cp, pp, dp, ep, zero, schedule, recompute, offload, microbatches</source>
        <translation>没有维度 %1；可用：tp、cp、pp、dp、ep、zero、schedule、recompute、offload、microbatches</translation>
    </message>
    <message>
        <source>%1 = %2 is not a device id (0 to %3)</source>
        <translation>%1 = %2 不是设备 id（0 到 %3）</translation>
    </message>
    <message>
        <source>device %1 ran out of host memory; use a smaller model, batch or fewer micro-batches in flight</source>
        <translation>设备 %1 的主机内存不足；请使用更小的模型、批次，或减少同时在途的微批次</translation>
    </message>
    <message>
        <source>out of GPU memory on GPU %1: asked %2 for %3, %4 free; this device counts %5 in use and holds %6 cached; the %7 virtual devices on that GPU count %8 and hold %9; use fewer micro-batches in flight, recompute, or more pipeline stages</source>
        <translation>GPU %1 显存不足：为 %3 申请 %2，空闲 %4；本设备计入使用 %5，缓存 %6；该 GPU 上的 %7 个虚拟设备共计入 %8，缓存 %9；请减少同时在途的微批次、使用重计算，或增加流水线阶段</translation>
    </message>
    <message>
        <source>out of GPU memory on GPU %1: asked %2 for %3, %4 free; this device counts %5 in use and holds %6 cached; use fewer micro-batches in flight, recompute, or more pipeline stages</source>
        <translation>GPU %1 显存不足：为 %3 申请 %2，空闲 %4；本设备计入使用 %5，缓存 %6；请减少同时在途的微批次、使用重计算，或增加流水线阶段</translation>
    </message>
    <message>
        <source>this run (%1 million events, %2 million memory samples) makes a %3 MiB file, more than the %4 MiB a run file may take to open again; export its trace instead (Chrome trace or CSV), or train fewer steps or micro-batches</source>
        <translation>这次运行（%1 百万个事件、%2 百万个内存采样）会生成 %3 MiB 的文件，超过了运行文件能再次打开的上限 %4 MiB；请改为导出它的轨迹（Chrome 轨迹或 CSV），或减少训练步数或微批次</translation>
    </message>
    <message>
        <source>%1 (during %2)</source>
        <translation>%1（发生在 %2 期间）</translation>
    </message>
    <message>
        <source>%1 characters</source>
        <translation>%1 个字符</translation>
    </message>
    <message>
        <source>%1 character</source>
        <translation>%1 个字符</translation>
    </message>
    <message>
        <source>%1 (data.sequence_length %2 + 1 for the last label)</source>
        <translation>%1（data.sequence_length %2，再加最后一个标签的 1 个）</translation>
    </message>
    <message>
        <source>(a 1-symbol question, the separator and a 1-symbol answer make 3 tokens, and the inputs are all but the last)</source>
        <translation>（1 个符号的问题、分隔符和 1 个符号的答案共 3 个词元，输入是除最后一个以外的全部）</translation>
    </message>
    <message>
        <source>(4 special tokens and 2 symbols)</source>
        <translation>（4 个特殊词元和 2 个符号）</translation>
    </message>
    <message>
        <source>(1-digit numbers: a + b = and a 2-digit sum make 6 tokens, and the inputs are all but the last)</source>
        <translation>（1 位数：a + b = 加上 2 位数的和共 6 个词元，输入是除最后一个以外的全部）</translation>
    </message>
    <message>
        <source>(4 special tokens and the digits 0-9)</source>
        <translation>（4 个特殊词元和数字 0-9）</translation>
    </message>
    <message>
        <source>--attach %1: write HOST:PORT (e.g. localhost:7300)</source>
        <translation>--attach %1：请写成 HOST:PORT（例如 localhost:7300）</translation>
    </message>
    <message>
        <source>--attach %1: %2 (is pipelab-cli train --serve running there, and does its --serve-allow list you?)</source>
        <translation>--attach %1 连接失败：%2（那里是否在运行 pipelab-cli train --serve，它的 --serve-allow 是否允许你连接？）</translation>
    </message>
    <message>
        <source>--attach %1: %2</source>
        <translation>--attach %1 连接失败：%2</translation>
    </message>
    <message>
        <source>not a PipeLab run&apos;s live stream (or it refused us)</source>
        <translation>这不是 PipeLab 运行的实时流（或者对方拒绝了连接）</translation>
    </message>
    <message>
        <source>the experiment it sent does not read: %1</source>
        <translation>它发来的实验无法读取：%1</translation>
    </message>
    <message>
        <source>the experiment it sent is not valid: %1</source>
        <translation>它发来的实验无效：%1</translation>
    </message>
    <message>
        <source>the run streams another PipeLab build&apos;s events; attach with the same build</source>
        <translation>该运行发送的是另一个 PipeLab 构建的事件；请用同一个构建连接</translation>
    </message>
    <message>
        <source>the run says it trains %1 steps</source>
        <translation>该运行声称要训练 %1 步</translation>
    </message>
    <message>
        <source>the run ended in state %1, which is not an end</source>
        <translation>该运行以状态 %1 结束，而这不是一种结束状态</translation>
    </message>
    <message>
        <source>the run sent %1</source>
        <translation>该运行发来的数据有误：%1</translation>
    </message>
    <message>
        <source>%1 on device %2, but its experiment has %3 devices</source>
        <translation>%1位于设备 %2，但它的实验只有 %3 个设备</translation>
    </message>
    <message>
        <source>%1 at a time that is not a finite number</source>
        <translation>%1的时间不是有限数</translation>
    </message>
    <message>
        <source>an event of kind %1, which is not an op kind</source>
        <translation>一个类型为 %1 的事件，而它不是操作类型</translation>
    </message>
    <message>
        <source>an event of group %1, which is not a group</source>
        <translation>一个组为 %1 的事件，而它不是通信组</translation>
    </message>
    <message>
        <source>an event that ends before it begins</source>
        <translation>一个结束早于开始的事件</translation>
    </message>
    <message>
        <source>a memory sample of %1 bytes in one category</source>
        <translation>一个单个类别就有 %1 字节的内存采样</translation>
    </message>
    <message>
        <source>an expert load with %1 routed counts but %2 dropped ones</source>
        <translation>一个专家负载，有 %1 个路由计数，却有 %2 个丢弃计数</translation>
    </message>
    <message>
        <source>an event</source>
        <translation>一个事件</translation>
    </message>
    <message>
        <source>a memory sample</source>
        <translation>一个内存采样</translation>
    </message>
    <message>
        <source>a step&apos;s metrics</source>
        <translation>一步的指标</translation>
    </message>
</context>
<context>
    <name>DeviceRowLabel</name>
    <message>
        <source>device %1</source>
        <translation>设备 %1</translation>
    </message>
    <message>
        <source>device %1 · stage %2</source>
        <translation>设备 %1 · 阶段 %2</translation>
    </message>
    <message>
        <source>device %1 · stages %2</source>
        <translation>设备 %1 · 阶段 %2</translation>
    </message>
    <message>
        <source> · replica %1</source>
        <translation> · 副本 %1</translation>
    </message>
    <message>
        <source> · shard %1</source>
        <translation> · 分片 %1</translation>
    </message>
    <message>
        <source> · context %1</source>
        <translation> · 上下文 %1</translation>
    </message>
</context>
<context>
    <name>GpuAvailability</name>
    <message>
        <source>This build has no CUDA backend (configure with -DPIPELAB_CUDA=ON on a machine with the CUDA toolkit).</source>
        <translation>此版本没有 CUDA 后端（请在装有 CUDA 工具包的机器上用 -DPIPELAB_CUDA=ON 配置）。</translation>
    </message>
    <message>
        <source>no CUDA device</source>
        <translation>没有 CUDA 设备</translation>
    </message>
    <message>
        <source>No GPU can be used: %1.</source>
        <translation>没有可用的 GPU：%1。</translation>
    </message>
    <message>
        <source>GPU %1: %2, %3 (%4 free)</source>
        <translation>GPU %1：%2，%3（空闲 %4）</translation>
    </message>
</context>
<context>
    <name>ModelTemplates</name>
    <message>
        <source>Tiny GPT (trains here)</source>
        <translation>微型 GPT（可在本机训练）</translation>
    </message>
    <message>
        <source>GPT-2 small (124M)</source>
        <translation>GPT-2 small（1.24 亿参数）</translation>
    </message>
    <message>
        <source>GPT-3 175B (predict only)</source>
        <translation>GPT-3 175B（仅预测）</translation>
    </message>
    <message>
        <source>LLaMA-style 7B (predict only)</source>
        <translation>LLaMA 式 7B（仅预测）</translation>
    </message>
    <message>
        <source>Small ResNet (MNIST)</source>
        <translation>小型 ResNet（MNIST）</translation>
    </message>
    <message>
        <source>MoE Transformer (Switch, top-1)</source>
        <translation>MoE Transformer（Switch，top-1）</translation>
    </message>
    <message>
        <source>GShard top-2</source>
        <translation>GShard top-2</translation>
    </message>
    <message>
        <source>Tiny LLaMA: grouped-query attention, rotary positions (trains here)</source>
        <translation>微型 LLaMA：分组查询注意力、旋转位置编码（可在本机训练）</translation>
    </message>
</context>
<context>
    <name>NumberText</name>
    <message>
        <source>%1 units</source>
        <translation>%1 单位</translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <source>Pipeline schedules</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>Asynchronous updates</source>
        <translation>异步更新</translation>
    </message>
    <message>
        <source>Data and tensor parallel</source>
        <translation>数据并行与张量并行</translation>
    </message>
    <message>
        <source>Mixture of experts</source>
        <translation>混合专家 (MoE)</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>the run failed: %1</source>
        <translation>运行失败：%1</translation>
    </message>
    <message>
        <source>cannot run: %1</source>
        <translation>无法运行：%1</translation>
    </message>
    <message>
        <source> · micro-batch %1</source>
        <translation> · 微批次 %1</translation>
    </message>
    <message>
        <source> · stage %1</source>
        <translation> · 阶段 %1</translation>
    </message>
    <message>
        <source> (chunk %1)</source>
        <translation>（分块 %1）</translation>
    </message>
    <message>
        <source>device %1 · step %2</source>
        <translation>设备 %1 · 第 %2 步</translation>
    </message>
    <message>
        <source> · writes weight version %1</source>
        <translation> · 写入权重版本 %1</translation>
    </message>
    <message>
        <source> · reads weight version %1</source>
        <translation> · 读取权重版本 %1</translation>
    </message>
    <message>
        <source> · %1 updates after its forward&apos;s weights</source>
        <translation> · 比其前向所用权重晚 %1 次更新</translation>
    </message>
    <message>
        <source>peer: device %1</source>
        <translation>对端：设备 %1</translation>
    </message>
    <message>
        <source>group: tensor parallel</source>
        <translation>通信组：张量并行</translation>
    </message>
    <message>
        <source>group: data parallel</source>
        <translation>通信组：数据并行</translation>
    </message>
    <message>
        <source>payload: %1</source>
        <translation>数据量：%1</translation>
    </message>
    <message>
        <source>duration %1 (from %2 to %3)</source>
        <translation>耗时 %1（从 %2 到 %3）</translation>
    </message>
    <message>
        <source>group: expert parallel</source>
        <translation>通信组：专家并行</translation>
    </message>
    <message>
        <source>group: context parallel</source>
        <translation>通信组：上下文并行</translation>
    </message>
</context>
<context>
    <name>TimeAxisUnit</name>
    <message>
        <source>time (units)</source>
        <translation>时间（单位）</translation>
    </message>
    <message>
        <source>time (µs)</source>
        <translation>时间（µs）</translation>
    </message>
    <message>
        <source>time (s)</source>
        <translation>时间（s）</translation>
    </message>
    <message>
        <source>time (ms)</source>
        <translation>时间（ms）</translation>
    </message>
</context>
<context>
    <name>TraceExport</name>
    <message>
        <source>Measured (%1): step %2 of the run</source>
        <translation>实测（%1）：运行的第 %2 步</translation>
    </message>
</context>
<context>
    <name>core</name>
    <message>
        <source>GPipe: all forwards, then all backwards (fill-drain); one micro-batch is naive model parallelism</source>
        <translation>GPipe：先做完所有前向，再做所有反向（填充-排空）；只有一个微批次时就是朴素模型并行</translation>
    </message>
    <message>
        <source>1F1B (PipeDream-Flush): warm-up forwards, then one forward one backward; memory of p micro-batches</source>
        <translation>1F1B（PipeDream-Flush）：先做预热前向，然后一次前向一次反向交替；内存为 p 个微批次的激活</translation>
    </message>
    <message>
        <source>Interleaved 1F1B: each device holds several virtual stages; the bubble shrinks by the chunk count</source>
        <translation>交错式 1F1B：每个设备持有多个虚拟阶段；气泡按分块数成比例缩小</translation>
    </message>
    <message>
        <source>Zero-bubble H1: backward split into input and weight gradients, weight gradients fill the bubbles</source>
        <translation>零气泡 H1：反向拆分为输入梯度和权重梯度，由权重梯度填补气泡</translation>
    </message>
    <message>
        <source>Zero-bubble V: two chunks per device placed in a V, split backward; about no bubble when F = BI = BW</source>
        <translation>零气泡 V：每个设备两个分块，呈 V 形放置，反向拆分；当 F = BI = BW 时几乎没有气泡</translation>
    </message>
    <message>
        <source>DualPipeV: DeepSeek&apos;s DualPipe cut in half, two chunks per device in a V; the steady phase pairs one chunk&apos;s forward with the other&apos;s backward</source>
        <translation>DualPipeV：DeepSeek 的 DualPipe 的一半，每个设备两个分块呈 V 形；稳态阶段将一个分块的前向与另一个分块的反向配对</translation>
    </message>
    <message>
        <source>PipeDream: asynchronous 1F1B without flush; stage s stashes p - s weight versions</source>
        <translation>PipeDream：不清空流水线的异步 1F1B；阶段 s 暂存 p - s 个权重版本</translation>
    </message>
    <message>
        <source>PipeDream-2BW: asynchronous, gradients accumulated over m micro-batches, two weight versions</source>
        <translation>PipeDream-2BW：异步，梯度在 m 个微批次上累积，两个权重版本</translation>
    </message>
    <message>
        <source>PipeMare: PipeDream&apos;s order with one weight version; a backward reads newer weights than its forward</source>
        <translation>PipeMare：PipeDream 的顺序，只有一个权重版本；反向读取的权重比其前向更新</translation>
    </message>
    <message>
        <source>DAPPLE: tries every pp, dp and micro-batch count on synchronous 1F1B, each simulated, then chooses the stage split; its plan runs as predicted</source>
        <translation>DAPPLE：在同步 1F1B 上尝试每种 pp、dp 和微批次数，逐一模拟，再选择阶段划分；其方案的运行与预测一致</translation>
    </message>
    <message>
        <source>PipeDream: a dynamic program over stages and per-stage replicas (asynchronous); runs the closest uniform dp x pp when its optimum is not uniform</source>
        <translation>PipeDream：对阶段及各阶段副本数做动态规划（异步）；最优解不均匀时运行最接近的均匀 dp x pp</translation>
    </message>
</context>
<context>
    <name>pipelab::ClusterPicture</name>
    <message>
        <source>… and one more node like these</source>
        <translation>……以及另外 1 个同样的节点</translation>
    </message>
    <message>
        <source>… and %1 more nodes like these</source>
        <translation>……以及另外 %1 个同样的节点</translation>
    </message>
    <message>
        <source>device %1 on node %2: stage %3, replica %4, shard %5, context rank %6</source>
        <translation>节点 %2 上的设备 %1：阶段 %3，副本 %4，分片 %5，上下文秩 %6</translation>
    </message>
</context>
<context>
    <name>pipelab::CompareView</name>
    <message>
        <source>Run %1:</source>
        <translation>运行 %1：</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Save this run to a file that Runs &gt; Open a run… reopens</source>
        <translation>把这次运行保存到文件，可用“运行记录 &gt; 打开运行记录…”重新打开</translation>
    </message>
    <message>
        <source>Memory of:</source>
        <translation>内存：</translation>
    </message>
    <message>
        <source>whole run</source>
        <translation>整个运行</translation>
    </message>
    <message>
        <source>Off: one step (the first after warm-up), both runs from its start. On: the whole run.</source>
        <translation>关：一步（预热后的第一步），两次运行都从该步开始。开：整个运行。</translation>
    </message>
    <message>
        <source>Open a run…</source>
        <translation>打开运行记录…</translation>
    </message>
    <message>
        <source>No runs yet. Run an experiment (Space), change it (say GPipe to 1F1B) and run it again: every run made since PipeLab started is kept here. Runs &gt; Open a run… reopens a saved one.</source>
        <translation>还没有运行记录。运行一个实验（空格），修改它（比如把 GPipe 改为 1F1B）后再运行一次：PipeLab 启动以来的每次运行都保存在这里。“运行记录 &gt; 打开运行记录…”可重新打开已保存的运行。</translation>
    </message>
    <message>
        <source>training step</source>
        <translation>训练步</translation>
    </message>
    <message>
        <source>loss (training batch)</source>
        <translation>损失（训练批次）</translation>
    </message>
    <message>
        <source>memory (MiB)</source>
        <translation>内存（MiB）</translation>
    </message>
    <message>
        <source>Measured statistics; the first (warm-up) step is left out</source>
        <translation>实测统计；不计第一步（预热）</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>设备 %1</translation>
    </message>
    <message>
        <source>%1 · no run</source>
        <translation>%1 · 无运行</translation>
    </message>
    <message>
        <source>the first step after warm-up</source>
        <translation>预热后的第一步</translation>
    </message>
    <message>
        <source>%1 · device %2 · %3</source>
        <translation>%1 · 设备 %2 · %3</translation>
    </message>
    <message>
        <source>Run %1</source>
        <translation>运行 %1</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>规划</translation>
    </message>
    <message>
        <source>%1 · dp %2 × tp %3 × pp %4 · m %5</source>
        <translation>%1 · dp %2 × tp %3 × pp %4 · m %5</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>步时间</translation>
    </message>
    <message>
        <source>%1 (warm-up only)</source>
        <translation>%1（仅预热）</translation>
    </message>
    <message>
        <source>%1 (mean of steps %2–%3)</source>
        <translation>%1（第 %2–%3 步的平均）</translation>
    </message>
    <message>
        <source>Samples/s</source>
        <translation>样本/秒</translation>
    </message>
    <message>
        <source>Bubble</source>
        <translation>气泡</translation>
    </message>
    <message>
        <source>Final loss</source>
        <translation>最终损失</translation>
    </message>
    <message>
        <source>Peak memory, device %1</source>
        <translation>峰值内存，设备 %1</translation>
    </message>
    <message>
        <source>Statistics leave the first (warm-up) step out.</source>
        <translation>统计不计第一步（预热）。</translation>
    </message>
    <message>
        <source>%1 · no run chosen</source>
        <translation>%1 · 未选择运行</translation>
    </message>
    <message>
        <source>%1: step %2 · bubble %3</source>
        <translation>%1：步时间 %2 · 气泡 %3</translation>
    </message>
    <message>
        <source>Stop comparing run %1</source>
        <translation>不再对比运行 %1</translation>
    </message>
    <message>
        <source>Add run</source>
        <translation>添加运行</translation>
    </message>
    <message>
        <source>Compare one more run (up to %1)</source>
        <translation>再对比一次运行（最多 %1 次）</translation>
    </message>
    <message>
        <source>The device&apos;s total, or one category of it: where the memory goes</source>
        <translation>设备的总内存，或其中的一类：内存去了哪里</translation>
    </message>
    <message>
        <source>total</source>
        <translation>总计</translation>
    </message>
    <message>
        <source>%1 (MiB)</source>
        <translation>%1（MiB）</translation>
    </message>
</context>
<context>
    <name>pipelab::DataPanel</name>
    <message>
        <source>folder with IDX files, or a CSV file</source>
        <translation>存放 IDX 文件的文件夹，或一个 CSV 文件</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Sequence tasks (copy, reverse, sort, add): how many token ids, special tokens included; the model&apos;s output layer follows it</source>
        <translation>序列任务（复制、反转、排序、加法）：词元 id 的个数，含特殊词元；模型的输出层随之调整</translation>
    </message>
    <message>
        <source>Global batch per step: split over the dp replicas, then into micro-batches</source>
        <translation>每步的全局批次：先分给各 dp 副本，再切成微批次</translation>
    </message>
    <message>
        <source>bf16-mixed: bf16 weights, gradients and activations with fp32 master weights and optimizer state (16 bytes per parameter under Adam), as the simulator predicts it. The cuda backend trains it (bf16 GEMMs; fp32 master weights, gradients and optimizer); the cpu backend trains fp32 only.</source>
        <translation>bf16-mixed：bf16 的权重、梯度和激活，加上 fp32 的主权重和优化器状态（使用 Adam 时每个参数 16 字节），模拟器按此预测。cuda 后端按此训练（bf16 矩阵乘；fp32 的主权重、梯度和优化器）；cpu 后端只用 fp32 训练。</translation>
    </message>
    <message>
        <source>at the end</source>
        <translation>在结束时</translation>
    </message>
    <message>
        <source>The same seed gives the same data and initial weights, whatever the split</source>
        <translation>相同的种子给出相同的数据和初始权重，与切分方式无关</translation>
    </message>
    <message>
        <source>Learning-rate rescheduling</source>
        <translation>学习率重调度</translation>
    </message>
    <message>
        <source>Each stage&apos;s step size is lr / delay^(1 - k/K): divided by its delay at first, lr again after K updates</source>
        <translation>每个阶段的步长为 lr / delay^(1 - k/K)：开始时除以其延迟，K 次更新后恢复为 lr</translation>
    </message>
    <message>
        <source>K: updates until the step size is the learning rate again</source>
        <translation>K：步长恢复为学习率之前的更新次数</translation>
    </message>
    <message>
        <source>Discrepancy correction</source>
        <translation>差异校正</translation>
    </message>
    <message>
        <source>A backward reads w - delay x velocity, an estimate of the weights its forward read</source>
        <translation>反向读取 w - delay x velocity，即对其前向所读权重的估计</translation>
    </message>
    <message>
        <source>gamma of the velocity&apos;s running average of weight changes</source>
        <translation>速度（权重变化的滑动平均）的衰减系数 gamma</translation>
    </message>
    <message>
        <source>Data set</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Source:</source>
        <translation>来源：</translation>
    </message>
    <message>
        <source>Files:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Samples:</source>
        <translation>样本数：</translation>
    </message>
    <message>
        <source>Classes:</source>
        <translation>类别数：</translation>
    </message>
    <message>
        <source>Features:</source>
        <translation>特征数：</translation>
    </message>
    <message>
        <source>Vocabulary:</source>
        <translation>词表大小：</translation>
    </message>
    <message>
        <source>Noise:</source>
        <translation>噪声：</translation>
    </message>
    <message>
        <source>Use at most:</source>
        <translation>最多使用：</translation>
    </message>
    <message>
        <source>Validation share:</source>
        <translation>验证集比例：</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Batch size:</source>
        <translation>批次大小：</translation>
    </message>
    <message>
        <source>Optimizer:</source>
        <translation>优化器：</translation>
    </message>
    <message>
        <source>Precision:</source>
        <translation>精度：</translation>
    </message>
    <message>
        <source>Learning rate:</source>
        <translation>学习率：</translation>
    </message>
    <message>
        <source>Momentum:</source>
        <translation>动量：</translation>
    </message>
    <message>
        <source>Weight decay:</source>
        <translation>权重衰减：</translation>
    </message>
    <message>
        <source>Steps:</source>
        <translation>步数：</translation>
    </message>
    <message>
        <source>Validate every:</source>
        <translation>验证间隔：</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>种子：</translation>
    </message>
    <message>
        <source>PipeMare:</source>
        <translation>PipeMare：</translation>
    </message>
    <message>
        <source>Warm-up updates:</source>
        <translation>预热更新次数：</translation>
    </message>
    <message>
        <source>Velocity decay:</source>
        <translation>速度衰减：</translation>
    </message>
    <message>
        <source>Choose a CSV file</source>
        <translation>选择一个 CSV 文件</translation>
    </message>
    <message>
        <source>CSV files (*.csv);;All files (*)</source>
        <translation>CSV 文件 (*.csv);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose a UTF-8 text file to learn from</source>
        <translation>选择一个用于学习的 UTF-8 文本文件</translation>
    </message>
    <message>
        <source>Text files (*.txt *.md LICENSE*);;All files (*)</source>
        <translation>文本文件 (*.txt *.md LICENSE*);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose the folder that holds the IDX files (train-*, t10k-*)</source>
        <translation>选择存放 IDX 文件（train-*、t10k-*）的文件夹</translation>
    </message>
    <message>
        <source>characters of the file → its character vocabulary</source>
        <translation>文件中的字符 → 其字符词表</translation>
    </message>
    <message>
        <source>token sequences, vocabulary of %1</source>
        <translation>词元序列，词表大小 %1</translation>
    </message>
    <message>
        <source>%1 features → %2 classes</source>
        <translation>%1 个特征 → %2 个类别</translation>
    </message>
    <message>
        <source>%1 features</source>
        <translation>%1 个特征</translation>
    </message>
    <message>
        <source>shape read from the files when the run starts</source>
        <translation>形状在运行开始时从文件读取</translation>
    </message>
    <message>
        <source>fp32 gradients</source>
        <translation>fp32 梯度</translation>
    </message>
    <message>
        <source>Gradients held and reduced across replicas in fp32 (4 bytes per parameter, 18 in all under Adam), as Megatron-LM does by default for bf16; off: in bf16, the ZeRO paper&apos;s 16 bytes. The simulator predicts either; the cuda backend keeps fp32 gradients.</source>
        <translation>梯度以 fp32 保存并在副本间归约（每个参数 4 字节，Adam 下共 18 字节），这是 Megatron-LM 对 bf16 的默认做法；关闭时梯度为 bf16，即 ZeRO 论文的 16 字节。模拟器两种都能预测；cuda 后端始终保存 fp32 梯度。</translation>
    </message>
</context>
<context>
    <name>pipelab::ExperimentDocument</name>
    <message>
        <source>Could not open %1: %2</source>
        <translation>无法打开 %1：%2</translation>
    </message>
    <message>
        <source>Could not save %1: %2</source>
        <translation>无法保存 %1：%2</translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
</context>
<context>
    <name>pipelab::ExpertLoadChart</name>
    <message>
        <source>tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>routed and kept</source>
        <translation>已路由并保留</translation>
    </message>
    <message>
        <source>dropped (over capacity)</source>
        <translation>被丢弃（超出容量）</translation>
    </message>
    <message>
        <source>expert e of layer L, after step %1</source>
        <translation>第 L 层的专家 e，第 %1 步之后</translation>
    </message>
    <message>
        <source>e%2
L%1</source>
        <translation>e%2
L%1</translation>
    </message>
</context>
<context>
    <name>pipelab::ExportActions</name>
    <message>
        <source>&amp;Timeline chart…</source>
        <translation>时间线图(&amp;T)…</translation>
    </message>
    <message>
        <source>timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>&amp;Memory chart…</source>
        <translation>内存图(&amp;M)…</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>T&amp;raining chart…</source>
        <translation>训练图(&amp;R)…</translation>
    </message>
    <message>
        <source>training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Trace as &amp;Chrome JSON (Perfetto)…</source>
        <translation>轨迹导出为 Chrome JSON（Perfetto）(&amp;C)…</translation>
    </message>
    <message>
        <source>&amp;Events as CSV…</source>
        <translation>事件导出为 CSV(&amp;E)…</translation>
    </message>
    <message>
        <source>Export the %1 chart</source>
        <translation>导出%1图</translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation>已写入 %1</translation>
    </message>
    <message>
        <source>predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Export the %1 trace for Perfetto / chrome://tracing</source>
        <translation>导出%1轨迹，用于 Perfetto / chrome://tracing</translation>
    </message>
    <message>
        <source>Chrome trace (*.json)</source>
        <translation>Chrome 轨迹 (*.json)</translation>
    </message>
    <message>
        <source>Export the %1 events as CSV (three files: _events, _memory, _steps)</source>
        <translation>将%1事件导出为 CSV（三个文件：_events、_memory、_steps）</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>%1_events.csv, _memory.csv and _steps.csv</source>
        <translation>%1_events.csv、_memory.csv 和 _steps.csv</translation>
    </message>
    <message>
        <source>comparison</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>&amp;Overhead chart…</source>
        <translation>开销图(&amp;O)…</translation>
    </message>
    <message>
        <source>overhead</source>
        <translation>开销</translation>
    </message>
    <message>
        <source>&amp;Animated timeline (GIF)…</source>
        <translation>时间线动画（GIF）(&amp;A)…</translation>
    </message>
    <message>
        <source>One step unfolding, bars appearing in time order, for slides: the run&apos;s second step (past the warm-up) for a synchronous schedule, else the prediction</source>
        <translation>一步的展开过程，条按时间顺序出现，用于幻灯片：同步调度取运行的第二步（预热之后），否则取预测</translation>
    </message>
    <message>
        <source>there are no runs to compare yet; run an experiment twice (Runs &gt; Compare runs)</source>
        <translation>还没有可对比的运行；把一个实验运行两次（运行记录 &gt; 比较运行）</translation>
    </message>
    <message>
        <source>Export one step of the timeline as an animated GIF</source>
        <translation>把时间线的一步导出为 GIF 动画</translation>
    </message>
    <message>
        <source>Animated GIF (*.gif)</source>
        <translation>GIF 动画 (*.gif)</translation>
    </message>
    <message>
        <source>&amp;Comparison of runs…</source>
        <translation>运行对比(&amp;C)…</translation>
    </message>
</context>
<context>
    <name>pipelab::FormulaWords</name>
    <message>
        <source> for m&gt;=p</source>
        <translation>（m ≥ p 时）</translation>
    </message>
    <message>
        <source> for m&lt;p</source>
        <translation>（m &lt; p 时）</translation>
    </message>
    <message>
        <source> (steady state)</source>
        <translation>（稳态）</translation>
    </message>
</context>
<context>
    <name>pipelab::LayerTableModel</name>
    <message>
        <source>Layer %1: no stage (%2)</source>
        <translation>第 %1 层：没有阶段（%2）</translation>
    </message>
    <message>
        <source>Layer %1 runs in pipeline stage %2 on pipeline device %3</source>
        <translation>第 %1 层在流水线阶段 %2 上运行，位于流水线设备 %3</translation>
    </message>
    <message>
        <source>%1 (vocab %2)</source>
        <translation>%1（词表 %2）</translation>
    </message>
    <message>
        <source>1 head</source>
        <translation>1 个头</translation>
    </message>
    <message>
        <source>%1 heads</source>
        <translation>%1 个头</translation>
    </message>
    <message>
        <source>%1 ch, %2×%2 /%3</source>
        <translation>%1 通道，%2×%2 /%3</translation>
    </message>
    <message>
        <source>synced</source>
        <translation>同步</translation>
    </message>
    <message>
        <source>local</source>
        <translation>本地</translation>
    </message>
    <message>
        <source>%1 ids → %1×%2</source>
        <translation>%1 个 id → %1×%2</translation>
    </message>
    <message>
        <source>The pipeline stage the split puts the layer on</source>
        <translation>切分把该层放到的流水线阶段</translation>
    </message>
    <message>
        <source>Forward FLOPs per sample (a multiply-add counts as two)</source>
        <translation>每个样本的前向 FLOPs（一次乘加算两次）</translation>
    </message>
    <message>
        <source>Bytes per sample kept from the forward for the backward</source>
        <translation>每个样本从前向保留到反向的字节数</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Bias</source>
        <translation>偏置</translation>
    </message>
    <message>
        <source>Stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>In → out</source>
        <translation>输入 → 输出</translation>
    </message>
    <message>
        <source>Params</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>FLOPs</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a layer type; choose one of: %2</source>
        <translation>“%1”不是层类型；请从以下选择：%2</translation>
    </message>
    <message>
        <source>Layer %1: the width must be a whole number of at least 1 (got &apos;%2&apos;)</source>
        <translation>第 %1 层：宽度必须是不小于 1 的整数（收到“%2”）</translation>
    </message>
    <message>
        <source>Layer %1: the width per token must be a whole number of at least 1 (got &apos;%2&apos;)</source>
        <translation>第 %1 层：每个词元的宽度必须是不小于 1 的整数（收到“%2”）</translation>
    </message>
    <message>
        <source>Layer %1: the number of heads must be a whole number of at least 1 (got &apos;%2&apos;)</source>
        <translation>第 %1 层：头数必须是不小于 1 的整数（收到“%2”）</translation>
    </message>
    <message>
        <source>Layer %1: the window must be a whole number of at least 1 (got &apos;%2&apos;)</source>
        <translation>第 %1 层：窗口必须是不小于 1 的整数（收到“%2”）</translation>
    </message>
    <message>
        <source>Layer %1: the output channels must be a whole number of at least 1 (got &apos;%2&apos;)</source>
        <translation>第 %1 层：输出通道数必须是不小于 1 的整数（收到“%2”）</translation>
    </message>
    <message>
        <source>Layer %1: the drop probability must be in [0, 1) (got &apos;%2&apos;)</source>
        <translation>第 %1 层：丢弃概率必须在 [0, 1) 内（收到“%2”）</translation>
    </message>
    <message>
        <source>%1 experts, top-%2</source>
        <translation>%1 个专家，top-%2</translation>
    </message>
    <message>
        <source>Linear: output width. Dropout: drop probability. Embedding: width per token. Transformer block: attention heads. Conv2d and residual block: output channels (with kernel and stride). Pools: the window (stride follows it). Batch norm: synced over data-parallel replicas or local. MoE: the number of experts (and top-k).</source>
        <translation>线性层：输出宽度。Dropout：丢弃概率。嵌入层：每个词元的宽度。Transformer 块：注意力头数。Conv2d 和残差块：输出通道数（以及卷积核和步幅）。池化：窗口大小（步幅与之相同）。批归一化：在数据并行副本间同步，或本地。MoE：专家数（以及 top-k）。</translation>
    </message>
    <message>
        <source>Layer %1: the experts must be a whole number of at least top_k = %2 (got &apos;%3&apos;)</source>
        <translation>第 %1 层：专家数必须是不小于 top_k = %2 的整数（收到“%3”）</translation>
    </message>
    <message>
        <source>%1, %2 experts, top-%3</source>
        <translation>%1，%2 个专家，top-%3</translation>
    </message>
    <message>
        <source>%1 (vocab %2, rotary positions)</source>
        <translation>%1（词表 %2，旋转位置编码）</translation>
    </message>
    <message>
        <source>%1 (%2 key/value)</source>
        <translation>%1（%2 个键/值头）</translation>
    </message>
    <message>
        <source>%1 (vocab %2, rotary positions, base %3)</source>
        <translation>%1（词表 %2，旋转位置编码，基数 %3）</translation>
    </message>
</context>
<context>
    <name>pipelab::MainWindow</name>
    <message>
        <source>Click to dismiss</source>
        <translation>点击关闭</translation>
    </message>
    <message>
        <source>Planning…</source>
        <translation>正在规划…</translation>
    </message>
    <message>
        <source>Plan for me: %1</source>
        <translation>自动规划：%1</translation>
    </message>
    <message>
        <source>No plan: %1</source>
        <translation>没有方案：%1</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>“%1” has changes that are not saved. Save them first?</source>
        <translation>“%1”有尚未保存的更改。先保存吗？</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新建(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>Run or pause training (Space)</source>
        <translation>运行或暂停训练（空格）</translation>
    </message>
    <message>
        <source>S&amp;tep</source>
        <translation>单步(&amp;T)</translation>
    </message>
    <message>
        <source>Run one training step, then pause (→)</source>
        <translation>运行一个训练步，然后暂停（→）</translation>
    </message>
    <message>
        <source>St&amp;op</source>
        <translation>停止(&amp;O)</translation>
    </message>
    <message>
        <source>Stop the run; what was recorded stays (Esc)</source>
        <translation>停止运行；已记录的内容保留（Esc）</translation>
    </message>
    <message>
        <source>R&amp;eset</source>
        <translation>重置(&amp;E)</translation>
    </message>
    <message>
        <source>Stop and clear the measured run (Ctrl+R)</source>
        <translation>停止并清除实测运行（Ctrl+R）</translation>
    </message>
    <message>
        <source>&amp;Plan for me…</source>
        <translation>自动规划(&amp;P)…</translation>
    </message>
    <message>
        <source>Choose dp, pp, the split and the micro-batches for a number of devices</source>
        <translation>为给定数量的设备选择 dp、pp、切分方式和微批次数</translation>
    </message>
    <message>
        <source>&amp;Undo plan</source>
        <translation>撤销规划(&amp;U)</translation>
    </message>
    <message>
        <source>Put back the parallel settings the last plan replaced</source>
        <translation>恢复上一次规划替换掉的并行设置</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source> Playback speed: </source>
        <translation> 回放速度： </translation>
    </message>
    <message>
        <source>Events are recorded as they happen; the charts replay them at this speed. At 1/1000×, one millisecond of training takes one second on screen. Live shows the newest events.</source>
        <translation>事件在发生时被记录；图表按此速度回放。1/1000× 时，一毫秒的训练在屏幕上持续一秒。“实时”显示最新事件。</translation>
    </message>
    <message>
        <source>Jump to live</source>
        <translation>跳到实时</translation>
    </message>
    <message>
        <source>Show everything recorded so far</source>
        <translation>显示目前记录的全部内容</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation>导出(&amp;E)</translation>
    </message>
    <message>
        <source>P&amp;lan</source>
        <translation>规划(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Presets</source>
        <translation>预设(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Timelines</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>Predicted under measured</source>
        <translation>预测在实测下方</translation>
    </message>
    <message>
        <source>Predicted beside measured</source>
        <translation>预测在实测旁边</translation>
    </message>
    <message>
        <source>Measured only</source>
        <translation>仅实测</translation>
    </message>
    <message>
        <source>Predicted only</source>
        <translation>仅预测</translation>
    </message>
    <message>
        <source>Replayed under measured</source>
        <translation>重放在实测下方</translation>
    </message>
    <message>
        <source>Predicted under replayed</source>
        <translation>预测在重放下方</translation>
    </message>
    <message>
        <source>Measured, replayed and predicted</source>
        <translation>实测、重放和预测</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Space: run / pause
→: one training step
Esc: stop
Ctrl+R: reset
Ctrl+N / Ctrl+O / Ctrl+S: new, open, save

Timeline: drag to pan, wheel to zoom, double-click to fit, hover for details.</source>
        <translation>空格：运行 / 暂停
→：一个训练步
Esc：停止
Ctrl+R：重置
Ctrl+N / Ctrl+O / Ctrl+S：新建、打开、保存

时间线：拖动平移，滚轮缩放，双击适应窗口，悬停查看详情。</translation>
    </message>
    <message>
        <source>&amp;About PipeLab</source>
        <translation>关于 PipeLab(&amp;A)</translation>
    </message>
    <message>
        <source>About PipeLab</source>
        <translation>关于 PipeLab</translation>
    </message>
    <message>
        <source>&lt;b&gt;PipeLab&lt;/b&gt; %1&lt;br&gt;See and try distributed deep-learning training: data, tensor and pipeline parallelism, their schedules, bubbles and memory.&lt;br&gt;&lt;br&gt;Licensed under the GNU GPL, version 3 or later. Charts by QCustomPlot (GPL-3.0+).</source>
        <translation>&lt;b&gt;PipeLab&lt;/b&gt; %1&lt;br&gt;观察并动手尝试分布式深度学习训练：数据并行、张量并行和流水线并行，以及它们的调度、气泡和内存。&lt;br&gt;&lt;br&gt;按 GNU GPL 第 3 版或更高版本授权。图表由 QCustomPlot（GPL-3.0+）绘制。</translation>
    </message>
    <message>
        <source>Parallelism</source>
        <translation>并行</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Data and training</source>
        <translation>数据与训练</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Statistics</source>
        <translation>统计</translation>
    </message>
    <message>
        <source>&amp;%1 %2</source>
        <translation>&amp;%1 %2</translation>
    </message>
    <message>
        <source>Clear the list</source>
        <translation>清空列表</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>Open an experiment</source>
        <translation>打开实验</translation>
    </message>
    <message>
        <source>Experiments (*.json);;All files (*)</source>
        <translation>实验 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Save the experiment</source>
        <translation>保存实验</translation>
    </message>
    <message>
        <source>Experiments (*.json)</source>
        <translation>实验 (*.json)</translation>
    </message>
    <message>
        <source>Fix the problems shown in the panels before running (%1)</source>
        <translation>运行前请先修正面板中显示的问题（%1）</translation>
    </message>
    <message>
        <source>The run stopped: %1</source>
        <translation>运行已停止：%1</translation>
    </message>
    <message>
        <source>Run failed: %1</source>
        <translation>运行失败：%1</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>暂停(&amp;P)</translation>
    </message>
    <message>
        <source>Run: %1</source>
        <translation>运行：%1</translation>
    </message>
    <message>
        <source> · step %1 of %2</source>
        <translation> · 第 %1 步，共 %2 步</translation>
    </message>
    <message>
        <source>The last run failed: %1</source>
        <translation>上次运行失败：%1</translation>
    </message>
    <message>
        <source>%1[*] — %2 — PipeLab</source>
        <translation>%1[*] — %2 — PipeLab</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>实时</translation>
    </message>
    <message>
        <source>1× (real time)</source>
        <translation>1×（真实时间）</translation>
    </message>
    <message>
        <source>1/10×</source>
        <translation>1/10×</translation>
    </message>
    <message>
        <source>1/100×</source>
        <translation>1/100×</translation>
    </message>
    <message>
        <source>1/1000× (1 ms in 1 s)</source>
        <translation>1/1000×（1 秒显示 1 ms）</translation>
    </message>
    <message>
        <source>1/10000× (1 ms in 10 s)</source>
        <translation>1/10000×（10 秒显示 1 ms）</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>Attached: %1</source>
        <translation>已连接：%1</translation>
    </message>
    <message>
        <source>Compare runs — PipeLab</source>
        <translation>比较运行 — PipeLab</translation>
    </message>
    <message>
        <source>R&amp;uns</source>
        <translation>运行记录(&amp;U)</translation>
    </message>
    <message>
        <source>Overhead</source>
        <translation>开销</translation>
    </message>
    <message>
        <source>Preset: %1</source>
        <translation>预设：%1</translation>
    </message>
    <message>
        <source>Expert load</source>
        <translation>专家负载</translation>
    </message>
    <message>
        <source>Cannot run: %1</source>
        <translation>无法运行：%1</translation>
    </message>
    <message>
        <source>backend.type = cuda: %1 Choose CPU threads under Backend in the Parallelism panel.</source>
        <translation>backend.type = cuda：%1 请在“并行”面板的“后端”中选择 CPU 线程。</translation>
    </message>
    <message>
        <source>Wait for Plan for me to finish: its plan changes the split</source>
        <translation>请等待自动规划完成：它的方案会改变切分方式</translation>
    </message>
    <message>
        <source>&amp;Search every split…</source>
        <translation>搜索所有切分(&amp;S)…</translation>
    </message>
    <message>
        <source>Search tp, cp, pp, dp, ZeRO, schedule, recompute and micro-batches for a cluster, and see every candidate&apos;s memory against its throughput</source>
        <translation>为一个集群搜索 tp、cp、pp、dp、ZeRO、调度、重计算和微批次，并查看每个候选方案的显存与吞吐量</translation>
    </message>
    <message>
        <source>Stop the run before loading a split</source>
        <translation>请先停止运行，再载入切分方案</translation>
    </message>
    <message>
        <source>Run %1 of %2: %3</source>
        <translation>第 %1 次运行（共 %2 次）：%3</translation>
    </message>
    <message>
        <source>“%1”</source>
        <translation>“%1”</translation>
    </message>
    <message>
        <source>%1 Run trains %2, then %3, and compares the two.</source>
        <translation>%1点“运行”先训练%2，再训练%3，然后对比两者。</translation>
    </message>
    <message>
        <source>%1 Run trains %2 and %3 in turn, and compares the %4.</source>
        <translation>%1点“运行”依次训练%2和%3，然后对比这 %4 次运行。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source> · run %1 of %2</source>
        <translation> · 第 %1 次运行（共 %2 次）</translation>
    </message>
</context>
<context>
    <name>pipelab::MemoryView</name>
    <message>
        <source>By category for:</source>
        <translation>按类别显示：</translation>
    </message>
    <message>
        <source>no memory samples yet</source>
        <translation>还没有内存采样</translation>
    </message>
    <message>
        <source>measured run</source>
        <translation>实测运行</translation>
    </message>
    <message>
        <source>predicted (simulated)</source>
        <translation>预测（模拟）</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>设备 %1</translation>
    </message>
    <message>
        <source>host (off the device)</source>
        <translation>主机（设备之外）</translation>
    </message>
    <message>
        <source>peak %1</source>
        <translation>峰值 %1</translation>
    </message>
    <message>
        <source>total (%1)</source>
        <translation>总计（%1）</translation>
    </message>
    <message>
        <source>device %1 (%2)</source>
        <translation>设备 %1（%2）</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>stashed weights</source>
        <translation>暂存权重</translation>
    </message>
    <message>
        <source>comm buffers</source>
        <translation>通信缓冲区</translation>
    </message>
    <message>
        <source>workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>device %1 (of %2)</source>
        <translation>设备 %1（共 %2 个）</translation>
    </message>
</context>
<context>
    <name>pipelab::ModelPanel</name>
    <message>
        <source>Shape of one input sample, e.g. 2 or 1, 28, 28</source>
        <translation>单个输入样本的形状，例如 2 或 1, 28, 28</translation>
    </message>
    <message>
        <source>Start from a Transformer…</source>
        <translation>从 Transformer 开始…</translation>
    </message>
    <message>
        <source>Fills the layer table, data and split with a GPT-style model. The predict-only ones are too big to train here; the simulator still predicts their time and memory per device.</source>
        <translation>用 GPT 式模型填写层表、数据和切分。标为“仅预测”的模型太大，无法在本机训练；模拟器仍会预测它们在每个设备上的时间和内存。</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Insert a layer after the selected one</source>
        <translation>在选中的层之后插入一层</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Move up</source>
        <translation>上移</translation>
    </message>
    <message>
        <source>Move down</source>
        <translation>下移</translation>
    </message>
    <message>
        <source>Set stage boundaries by hand:</source>
        <translation>手动设置阶段边界：</translation>
    </message>
    <message>
        <source>Off: the partition rule (Parallelism panel) places the stage boundaries</source>
        <translation>关闭时：由切分规则（并行面板）确定阶段边界</translation>
    </message>
    <message>
        <source>first layer of each stage after the first, e.g. 2, 4</source>
        <translation>除第一个阶段外，每个阶段的第一层，例如 2, 4</translation>
    </message>
    <message>
        <source>Template:</source>
        <translation>模板：</translation>
    </message>
    <message>
        <source>Input shape:</source>
        <translation>输入形状：</translation>
    </message>
    <message>
        <source>Loss:</source>
        <translation>损失：</translation>
    </message>
    <message>
        <source>%1 layers · %2 parameters · %3 pipeline stages (%4)</source>
        <translation>%1 层 · %2 个参数 · %3 个流水线阶段（%4）</translation>
    </message>
    <message>
        <source>set by hand</source>
        <translation>手动设置</translation>
    </message>
    <message>
        <source>rule: %1</source>
        <translation>规则：%1</translation>
    </message>
</context>
<context>
    <name>pipelab::OverheadView</name>
    <message>
        <source>Where the time goes (share of the run, per device)</source>
        <translation>时间都去哪了（占运行的比例，按设备）</translation>
    </message>
    <message>
        <source>share of the run</source>
        <translation>占运行的比例</translation>
    </message>
    <message>
        <source>%1 M</source>
        <comment>device, measured</comment>
        <translation>%1 实</translation>
    </message>
    <message>
        <source>%1 P</source>
        <comment>device, predicted</comment>
        <translation>%1 预</translation>
    </message>
    <message>
        <source>device: M measured, P predicted</source>
        <translation>设备：实 = 实测，预 = 预测</translation>
    </message>
    <message>
        <source>no trace yet</source>
        <translation>还没有轨迹</translation>
    </message>
    <message>
        <source>textbook bubble
%1</source>
        <translation>教科书气泡
%1</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>recomputation</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>load imbalance</source>
        <translation>负载不均衡</translation>
    </message>
    <message>
        <source>bubble</source>
        <translation>气泡</translation>
    </message>
    <message>
        <source>collectives
(all-reduce, RS, AG, A2A)</source>
        <translation>集合通信
（all-reduce、RS、AG、A2A）</translation>
    </message>
</context>
<context>
    <name>pipelab::ParallelPanel</name>
    <message>
        <source>Data-parallel replicas: each holds the whole pipeline</source>
        <translation>数据并行副本数：每个副本持有整条流水线</translation>
    </message>
    <message>
        <source>Tensor-parallel shards per stage: each linear is split across them</source>
        <translation>每个阶段的张量并行分片数：每个线性层在它们之间切分</translation>
    </message>
    <message>
        <source>Pipeline devices: the layer stack is cut into this many parts</source>
        <translation>流水线设备数：层堆叠被切成这么多段</translation>
    </message>
    <message>
        <source>Virtual stages per pipeline device (interleaved-1f1b; 2 for zb-v and dualpipev)</source>
        <translation>每个流水线设备上的虚拟阶段数（interleaved-1f1b；zb-v 和 dualpipev 为 2）</translation>
    </message>
    <message>
        <source>sync</source>
        <translation>同步</translation>
    </message>
    <message>
        <source>async</source>
        <translation>异步</translation>
    </message>
    <message>
        <source>Sync: every replica applies the same averaged gradient each step. Async: replicas push gradients to a parameter server and may read weights up to &apos;staleness&apos; steps old.</source>
        <translation>同步：每一步所有副本应用相同的平均梯度。异步：副本把梯度推送到参数服务器，读取的权重最多可以过时“陈旧度”步。</translation>
    </message>
    <message>
        <source>Recompute activations in backward</source>
        <translation>在反向中重计算激活</translation>
    </message>
    <message>
        <source>Keep only each stage&apos;s input from the forward and rebuild the rest before the backward: less memory, one more forward per micro-batch</source>
        <translation>前向只保留每个阶段的输入，其余在反向之前重建：内存更少，每个微批次多一次前向</translation>
    </message>
    <message>
        <source>Recompute only attention scores (selective)</source>
        <translation>只重计算注意力分数（选择性）</translation>
    </message>
    <message>
        <source>Transformers: keep no attention scores from the forward and recompute them in the backward, the largest activation for little compute (Korthikanti et al.)</source>
        <translation>Transformer：前向不保留注意力分数，在反向中重算；以很少的计算换掉最大的激活（Korthikanti 等）</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>不卸载</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations: copy each forward&apos;s activations to host memory on the copy lane and bring them back just before their backward (free while the copies hide behind compute). Optimizer state: keep it in host memory and run the update there (ZeRO-Offload)</source>
        <translation>激活：在拷贝通道上把每次前向的激活拷到主机内存，并在对应反向之前取回（拷贝被计算掩盖时不耗时）。优化器状态：保存在主机内存中，并在主机上执行更新（ZeRO-Offload）</translation>
    </message>
    <message>
        <source>Sequence parallel</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <source>Transformers with tp &gt; 1: split the norms, dropouts and residuals along the sequence instead of repeating them on every shard; all-reduces become reduce-scatter + all-gather</source>
        <translation>tp &gt; 1 的 Transformer：沿序列维度切分归一化、dropout 和残差，而不是在每个分片上重复；全归约变为归约散射 + 全收集</translation>
    </message>
    <message>
        <source>balanced: even FLOPs per stage; uniform: even layer counts; params: even parameter counts; explicit: the boundaries set in the Model panel</source>
        <translation>balanced：各阶段 FLOPs 均衡；uniform：各阶段层数相同；params：各阶段参数量相同；explicit：使用模型面板中设置的边界</translation>
    </message>
    <message>
        <source>unit costs (F = B = W = 1)</source>
        <translation>单位代价（F = B = W = 1）</translation>
    </message>
    <message>
        <source>The device the predicted timeline is simulated on</source>
        <translation>用来模拟预测时间线的设备</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程</translation>
    </message>
    <message>
        <source>CUDA</source>
        <translation>CUDA</translation>
    </message>
    <message>
        <source>one per device</source>
        <translation>每设备一个</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>dp</source>
        <translation>dp</translation>
    </message>
    <message>
        <source>tp</source>
        <translation>tp</translation>
    </message>
    <message>
        <source>pp</source>
        <translation>pp</translation>
    </message>
    <message>
        <source>Pipeline schedule</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <source>Schedule:</source>
        <translation>调度：</translation>
    </message>
    <message>
        <source>Chunks:</source>
        <translation>分块数：</translation>
    </message>
    <message>
        <source>Micro-batches:</source>
        <translation>微批次数：</translation>
    </message>
    <message>
        <source>Update:</source>
        <translation>更新：</translation>
    </message>
    <message>
        <source>Staleness:</source>
        <translation>陈旧度：</translation>
    </message>
    <message>
        <source>Offload to host:</source>
        <translation>卸载到主机：</translation>
    </message>
    <message>
        <source>Partition rule:</source>
        <translation>切分规则：</translation>
    </message>
    <message>
        <source>Predict on:</source>
        <translation>预测设备：</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>Run on:</source>
        <translation>运行于：</translation>
    </message>
    <message>
        <source>CPU threads:</source>
        <translation>CPU 线程数：</translation>
    </message>
    <message>
        <source>m = %1</source>
        <translation>m = %1</translation>
    </message>
    <message>
        <source>%1 micro-batches of %2 samples per replica</source>
        <translation>每个副本 %1 个微批次，每个 %2 个样本</translation>
    </message>
    <message>
        <source>Predicted bubble: —</source>
        <translation>预测气泡：—</translation>
    </message>
    <message>
        <source>Predicted bubble: %1 of device time idle</source>
        <translation>预测气泡：设备时间的 %1 处于空闲</translation>
    </message>
    <message>
        <source>of which %1 in collectives (see Overhead)</source>
        <translation>其中 %1 在集合通信中（见“开销”）</translation>
    </message>
    <message>
        <source>as many as needed</source>
        <translation>按需</translation>
    </message>
    <message>
        <source>How many nodes of the device&apos;s node type the run is placed on (tensor parallel innermost, pipeline outermost, as Megatron-LM does)</source>
        <translation>运行放置在多少个该设备所属类型的节点上（与 Megatron-LM 相同：张量并行在最内层，流水线并行在最外层）</translation>
    </message>
    <message>
        <source>Nodes:</source>
        <translation>节点数：</translation>
    </message>
    <message>
        <source>Unit costs: no hardware, every op takes its unit.</source>
        <translation>单位代价：不涉及硬件，每个操作耗时一个单位。</translation>
    </message>
    <message>
        <source>tensor-parallel groups</source>
        <translation>张量并行组</translation>
    </message>
    <message>
        <source>data-parallel groups</source>
        <translation>数据并行组</translation>
    </message>
    <message>
        <source>pipeline sends</source>
        <translation>流水线发送</translation>
    </message>
    <message>
        <source>%1 × %2 (%3 devices each, %4 in use)</source>
        <translation>%1 × %2（每个节点 %3 个设备，使用 %4 个）</translation>
    </message>
    <message>
        <source>; every group stays inside one node</source>
        <translation>；所有组都在同一节点内</translation>
    </message>
    <message>
        <source>; across the network: %1</source>
        <translation>；经过网络：%1</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Overlap gradient all-reduce with the backward</source>
        <translation>梯度全归约与反向传播重叠</translation>
    </message>
    <message>
        <source>Predict the data-parallel gradient all-reduce in buckets under the last backward, as DDP and Megatron-LM do; off: after the backward</source>
        <translation>预测时将数据并行的梯度全归约分桶，在最后一次反向传播期间进行（与 DDP 和 Megatron-LM 相同）；关闭时在反向传播之后进行</translation>
    </message>
    <message>
        <source>0: every replica holds everything</source>
        <translation>0：每个副本持有全部状态</translation>
    </message>
    <message>
        <source>1: optimizer state sharded</source>
        <translation>1：切分优化器状态</translation>
    </message>
    <message>
        <source>2: + gradients sharded</source>
        <translation>2：再切分梯度</translation>
    </message>
    <message>
        <source>3: + weights sharded (FSDP)</source>
        <translation>3：再切分权重（FSDP）</translation>
    </message>
    <message>
        <source>ZeRO stage:</source>
        <translation>ZeRO 阶段：</translation>
    </message>
    <message>
        <source>Context-parallel ranks: each holds two of 2 cp chunks of every sequence, and each block&apos;s attention gathers the keys and values of all of them (Transformers; trains on the cpu and cuda backends)</source>
        <translation>上下文并行的秩数：每个秩持有每条序列 2 cp 块中的两块，每个块的注意力收集所有秩的键和值（Transformer；可在 cpu 和 cuda 后端上训练）</translation>
    </message>
    <message>
        <source>cp</source>
        <translation>cp</translation>
    </message>
    <message>
        <source>context-parallel rings</source>
        <translation>上下文并行环</translation>
    </message>
    <message>
        <source>ZeRO: the data-parallel replicas share out the optimizer state, then the gradients, then the weights (each holds 1/dp), paid for with reduce-scatters and all-gathers. Every stage trains and is predicted; 2 and 3 need pp = 1</source>
        <translation>ZeRO：数据并行的各副本依次分摊优化器状态、梯度、权重（每个副本持有 1/dp），代价是 reduce-scatter 和 all-gather。每个阶段都可训练、可预测；2 和 3 需要 pp = 1</translation>
    </message>
    <message>
        <source>Free gathered weights after the forward</source>
        <translation>前向之后释放收集来的权重</translation>
    </message>
    <message>
        <source>ZeRO 3 (FSDP&apos;s reshard_after_forward): free each layer&apos;s gathered weights after its forward and gather them again for its backward (least memory), or keep them until the backward (one gather per forward pass instead of two: less traffic, more memory)</source>
        <translation>ZeRO 3（FSDP 的 reshard_after_forward）：每层前向之后释放收集来的权重、反向时再收集一次（内存最少），或一直保留到反向（每次前向只收集一次而不是两次：通信更少，内存更多）</translation>
    </message>
    <message>
        <source>Each box is a node, each square a device: its colour is its pipeline stage, t its tensor-parallel shard, d its data-parallel replica</source>
        <translation>每个方框是一个节点，每个小方块是一台设备：颜色表示其流水线阶段，t 为张量并行分片，d 为数据并行副本</translation>
    </message>
    <message>
        <source>Blocks rebuilt together: the input of every n-th block is kept and n blocks are rebuilt at a time (Megatron-LM&apos;s --recompute-num-layers); more blocks keep fewer inputs and rebuild more at once</source>
        <translation>一起重算的块数：每隔 n 个块保留一个块的输入，每次重算 n 个块（Megatron-LM 的 --recompute-num-layers）；块数越多，保留的输入越少，一次重算的越多</translation>
    </message>
    <message>
        <source>Blocks per checkpoint:</source>
        <translation>每个检查点的块数：</translation>
    </message>
    <message>
        <source>… one block at a time, as Megatron-LM</source>
        <translation>……每次一个块，与 Megatron-LM 相同</translation>
    </message>
    <message>
        <source>Transformers: keep each block&apos;s input, not only the stage&apos;s, and rebuild one block at a time in the backward: the memory of Megatron-LM&apos;s full recomputation. Trains on the cpu backend; the cuda backend rebuilds whole stages</source>
        <translation>Transformer：不仅保留阶段的输入，还保留每个块的输入，在反向中每次重建一个块：即 Megatron-LM 完全重计算的内存。可在 cpu 后端训练；cuda 后端重建整个阶段</translation>
    </message>
</context>
<context>
    <name>pipelab::PlanController</name>
    <message>
        <source>%1 plan: dp %2 x tp %3 x pp %4, %5 micro-batches, %6; predicted step %7</source>
        <translation>%1 方案：dp %2 x tp %3 x pp %4，%5 个微批次，%6；预测步时间 %7</translation>
    </message>
    <message>
        <source>the experiment changed while it was being planned; plan it again</source>
        <translation>规划期间实验已被修改；请重新规划</translation>
    </message>
    <message>
        <source>the split does not suit the experiment as it is now: %1</source>
        <translation>该切分方案不适合当前的实验：%1</translation>
    </message>
</context>
<context>
    <name>pipelab::PlanDialog</name>
    <message>
        <source>Plan for me</source>
        <translation>自动规划</translation>
    </message>
    <message>
        <source>Devices in all; each stage replica takes parallel.tp = %1 of them</source>
        <translation>设备总数；每个阶段副本占用其中 parallel.tp = %1 个</translation>
    </message>
    <message>
        <source>e.g. 16GiB, 80GB or a number of bytes</source>
        <translation>例如 16GiB、80GB 或字节数</translation>
    </message>
    <message>
        <source>DAPPLE</source>
        <translation>DAPPLE</translation>
    </message>
    <message>
        <source>PipeDream</source>
        <translation>PipeDream</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Memory per device</source>
        <translation>每设备内存</translation>
    </message>
    <message>
        <source>Planner</source>
        <translation>规划器</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>规划</translation>
    </message>
    <message>
        <source>Choose the split of the open experiment for this cluster. The plan replaces the parallel settings; Plan &gt; Undo plan puts them back.</source>
        <translation>为这个集群选择当前实验的切分方式。方案会替换并行设置；“规划 &gt; 撤销规划”可恢复。</translation>
    </message>
    <message>
        <source>Memory per device must be a size above 0, e.g. 16GiB or 80GB.</source>
        <translation>每设备内存必须是大于 0 的大小，例如 16GiB 或 80GB。</translation>
    </message>
    <message>
        <source>Devices must be a multiple of parallel.tp = %1 (each stage replica takes %1).</source>
        <translation>设备数必须是 parallel.tp = %1 的倍数（每个阶段副本占用 %1 个）。</translation>
    </message>
</context>
<context>
    <name>pipelab::PredictionUpdater</name>
    <message>
        <source>parallel: dp x tp x cp x pp = %1 devices is more than the %2 the app simulates interactively; use fewer, or pipelab-cli simulate for large plans</source>
        <translation>parallel：dp x tp x cp x pp = %1 个设备，超过应用交互式模拟的上限 %2；请减少设备数，或用 pipelab-cli simulate 模拟大型方案</translation>
    </message>
</context>
<context>
    <name>pipelab::PresetNote</name>
    <message>
        <source>Click to hide</source>
        <translation>点击隐藏</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;: %2</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;：%2</translation>
    </message>
</context>
<context>
    <name>pipelab::RunController</name>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>preparing</source>
        <translation>准备中</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>the run failed without saying why</source>
        <translation>运行失败，但未给出原因</translation>
    </message>
    <message>
        <source>The timeline and memory curves stop at %1 million recorded ops and memory samples, to keep the app&apos;s memory in bounds; the loss and the statistics of every step go on. Fewer steps or micro-batches show the whole run.</source>
        <translation>为使应用的内存占用有界，时间线和内存曲线在记录 %1 百万个操作和内存样本后停止；每一步的损失和统计仍会继续。减少步数或微批次数即可看到完整的运行。</translation>
    </message>
</context>
<context>
    <name>pipelab::RunSeriesController</name>
    <message>
        <source>“%1” cannot run: %2</source>
        <translation>“%1”无法运行：%2</translation>
    </message>
    <message>
        <source>“%1” ended early (%2); the runs made are in the Runs menu</source>
        <translation>“%1”提前结束（%2）；已完成的运行在“运行记录”菜单中</translation>
    </message>
    <message>
        <source>“%1” ended early (%2), so the runs after it did not run</source>
        <translation>“%1”提前结束（%2），因此它之后的运行没有进行</translation>
    </message>
</context>
<context>
    <name>pipelab::RunStore</name>
    <message>
        <source>%1 steps · %2 ops recorded</source>
        <translation>%1 步 · 记录了 %2 个操作</translation>
    </message>
    <message>
        <source>%1 · %2 · %3</source>
        <translation>%1 · %2 · %3</translation>
    </message>
    <message>
        <source>there is no run to save; run an experiment first</source>
        <translation>没有可保存的运行；请先运行一个实验</translation>
    </message>
    <message>
        <source>cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
</context>
<context>
    <name>pipelab::RunsMenu</name>
    <message>
        <source>&amp;Compare runs…</source>
        <translation>比较运行(&amp;C)…</translation>
    </message>
    <message>
        <source>Two runs side by side: loss, memory, statistics and timelines on one time scale</source>
        <translation>两次运行并排显示：损失、内存、统计和时间线使用同一时间刻度</translation>
    </message>
    <message>
        <source>&amp;Open a run…</source>
        <translation>打开运行记录(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save the latest run…</source>
        <translation>保存最近一次运行(&amp;S)…</translation>
    </message>
    <message>
        <source>(no runs yet)</source>
        <translation>（还没有运行记录）</translation>
    </message>
    <message>
        <source>Open a run: %1</source>
        <translation>打开运行记录：%1</translation>
    </message>
    <message>
        <source>Opened the run %1</source>
        <translation>已打开运行记录 %1</translation>
    </message>
    <message>
        <source>Save the run: %1</source>
        <translation>保存运行：%1</translation>
    </message>
    <message>
        <source>Saved the run to %1</source>
        <translation>已把运行保存到 %1</translation>
    </message>
    <message>
        <source>Open a saved run</source>
        <translation>打开已保存的运行</translation>
    </message>
    <message>
        <source>PipeLab runs (*.json);;All files (*)</source>
        <translation>PipeLab 运行记录 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Save the run: there is no run to save; run an experiment first</source>
        <translation>保存运行：没有可保存的运行；请先运行一个实验</translation>
    </message>
    <message>
        <source>Save the run</source>
        <translation>保存运行</translation>
    </message>
    <message>
        <source>PipeLab runs (*.json)</source>
        <translation>PipeLab 运行记录 (*.json)</translation>
    </message>
</context>
<context>
    <name>pipelab::SplitSearchDialog</name>
    <message>
        <source>Search every split</source>
        <translation>搜索所有切分</translation>
    </message>
    <message>
        <source>Every plan uses all of these devices</source>
        <translation>每个方案都使用全部这些设备</translation>
    </message>
    <message>
        <source>e.g. 16GiB, 80GB or a number of bytes</source>
        <translation>例如 16GiB、80GB 或字节数</translation>
    </message>
    <message>
        <source>Memory kept free on each device: a plan fits when its peak stays below the rest</source>
        <translation>每个设备预留的空闲显存：方案的峰值低于其余部分时才算放得下</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Search tries every tp, cp, pp, dp, ZeRO stage, schedule, recompute policy and micro-batch count on the devices given.</source>
        <translation>搜索会在给定的设备上尝试每一种 tp、cp、pp、dp、ZeRO 阶段、调度、重计算策略和微批次数。</translation>
    </message>
    <message>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Memory per device</source>
        <translation>每设备内存</translation>
    </message>
    <message>
        <source>Keep free</source>
        <translation>预留空闲</translation>
    </message>
    <message>
        <source>Show only:</source>
        <translation>只显示：</translation>
    </message>
    <message>
        <source>Show only the candidates with this %1</source>
        <translation>只显示该 %1 的候选方案</translation>
    </message>
    <message>
        <source>memory per device (GiB)</source>
        <translation>每设备显存 (GiB)</translation>
    </message>
    <message>
        <source>throughput (samples per second)</source>
        <translation>吞吐量（样本/秒）</translation>
    </message>
    <message>
        <source>estimated</source>
        <translation>估计</translation>
    </message>
    <message>
        <source>simulated</source>
        <translation>模拟</translation>
    </message>
    <message>
        <source>chosen</source>
        <translation>已选</translation>
    </message>
    <message>
        <source>Click a point to see its split.</source>
        <translation>点击一个点查看其切分方案。</translation>
    </message>
    <message>
        <source>Load into experiment</source>
        <translation>载入实验</translation>
    </message>
    <message>
        <source>Replace the experiment&apos;s parallel settings with this split (Plan &gt; Undo plan puts them back)</source>
        <translation>用该切分替换实验的并行设置（规划 &gt; 撤销规划可恢复）</translation>
    </message>
    <message>
        <source>split search: %1, %2 step %3</source>
        <translation>切分搜索：%1，%2 步长 %3</translation>
    </message>
    <message>
        <source>Memory per device must be a size above 0, e.g. 80GB or 16GiB.</source>
        <translation>每设备显存必须是大于 0 的大小，例如 80GB 或 16GiB。</translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>正在搜索…</translation>
    </message>
    <message>
        <source>No search: %1</source>
        <translation>无法搜索：%1</translation>
    </message>
    <message>
        <source>%1 candidates: %2 pruned as invalid, %3 points (%4 simulated). %5 usable per device.</source>
        <translation>%1 个候选方案：%2 个因无效被剪除，%3 个点（%4 个已模拟）。每设备可用 %5。</translation>
    </message>
    <message>
        <source>No split fits: see how far each is over the memory line.</source>
        <translation>没有放得下的切分：可看每个方案超出显存线多少。</translation>
    </message>
    <message>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <source>Simulated: step %1, MFU %2%, bubble %3%, peak %4 per device.</source>
        <translation>模拟：步长 %1，MFU %2%，气泡 %3%，每设备峰值 %4。</translation>
    </message>
    <message>
        <source>Estimated (not simulated): step about %1 (at least %2), about %3 per device.</source>
        <translation>估计（未模拟）：步长约 %1（至少 %2），每设备约 %3。</translation>
    </message>
    <message>
        <source>Over the usable memory: it would not fit.</source>
        <translation>超出可用显存：放不下。</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Export launch</source>
        <translation>导出启动命令</translation>
    </message>
    <message>
        <source>This split as Megatron-LM flags or a torchtitan job section, copied to the clipboard</source>
        <translation>将此划分导出为 Megatron-LM 参数或 torchtitan 任务配置段，并复制到剪贴板</translation>
    </message>
    <message>
        <source>Megatron-LM flags</source>
        <translation>Megatron-LM 参数</translation>
    </message>
    <message>
        <source>torchtitan job section</source>
        <translation>torchtitan 任务配置段</translation>
    </message>
    <message>
        <source>This split cannot be exported: %1</source>
        <translation>此划分无法导出：%1</translation>
    </message>
    <message>
        <source>Copied to the clipboard. Fields listed as &quot;not exported&quot; have no equivalent in the tool; set them by hand or leave them out.</source>
        <translation>已复制到剪贴板。标为“not exported”的字段在该工具中没有对应项；请手动设置或省略。</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>split</source>
        <translation>切分</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步长</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <source>bubble</source>
        <translation>气泡</translation>
    </message>
    <message>
        <source>peak per device</source>
        <translation>每设备峰值</translation>
    </message>
    <message>
        <source>The search&apos;s best plans, simulated, fastest first</source>
        <translation>搜索得到的最佳方案（已模拟），最快的在前</translation>
    </message>
    <message>
        <source>At its peak: %1.</source>
        <translation>峰值时：%1。</translation>
    </message>
    <message>
        <source>The search&apos;s plan %1 of %2.</source>
        <translation>搜索结果中的第 %1 个方案（共 %2 个）。</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>slower</source>
        <translation>更慢</translation>
    </message>
    <message>
        <source>not simulated</source>
        <translation>未模拟</translation>
    </message>
    <message>
        <source>invalid</source>
        <translation>无效</translation>
    </message>
    <message>
        <source>Set aside (%1): %2</source>
        <translation>被排除（%1）：%2</translation>
    </message>
    <message>
        <source>Pareto front of the simulated plans that fit</source>
        <translation>放得下的已模拟方案的帕累托前沿</translation>
    </message>
    <message>
        <source>%1 over the %2 usable</source>
        <translation>超出可用的 %2 共 %1</translation>
    </message>
    <message>
        <source>needs at least %1 per device (model states and one micro-batch&apos;s activations), %2</source>
        <translation>每个设备至少需要 %1（模型状态加一个微批次的激活），%2</translation>
    </message>
    <message>
        <source>the simulator predicts a peak of %1, %2</source>
        <translation>模拟器预测峰值为 %1，%2</translation>
    </message>
    <message>
        <source>simulated at %1, behind %2 faster plans</source>
        <translation>模拟结果为 %1，落后于 %2 个更快的方案</translation>
    </message>
    <message>
        <source>its step takes at least %1, %2 more than plan %3&apos;s %4</source>
        <translation>每步至少需要 %1，比第 %3 个方案的 %4 多 %2</translation>
    </message>
    <message>
        <source>estimated at %1 (at least %2)</source>
        <translation>估计为 %1（至少 %2）</translation>
    </message>
    <message>
        <source>%1 and %2, %3 over the usable memory</source>
        <translation>%1，内存 %2，超出可用内存 %3</translation>
    </message>
    <message>
        <source>%1, %2 more than plan %3&apos;s simulated %4</source>
        <translation>%1，比第 %3 个方案模拟的 %4 多 %2</translation>
    </message>
    <message>
        <source>%1, %2 less than plan %3&apos;s simulated %4</source>
        <translation>%1，比第 %3 个方案模拟的 %4 少 %2</translation>
    </message>
    <message>
        <source>%1; the search simulates %2 candidates in the order of their estimates (--max-simulations)</source>
        <translation>%1；搜索按估计值的顺序只模拟 %2 个候选（--max-simulations）</translation>
    </message>
</context>
<context>
    <name>pipelab::StatsPanel</name>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Utilisation
measured</source>
        <translation>利用率
实测</translation>
    </message>
    <message>
        <source>Utilisation
predicted</source>
        <translation>利用率
预测</translation>
    </message>
    <message>
        <source>Peak memory
measured</source>
        <translation>峰值内存
实测</translation>
    </message>
    <message>
        <source>Peak memory
predicted</source>
        <translation>峰值内存
预测</translation>
    </message>
    <message>
        <source>Bubble: measured %1 · replayed %2 · simulated %3</source>
        <translation>气泡：实测 %1 · 重放 %2 · 模拟 %3</translation>
    </message>
    <message>
        <source>%1 formula: %2, with p = %3, m = %4%5: %6</source>
        <translation>%1 公式：%2，其中 p = %3，m = %4%5：%6</translation>
    </message>
    <message>
        <source>, v = %1</source>
        <translation>，v = %1</translation>
    </message>
    <message>
        <source>Formula: %1</source>
        <translation>公式：%1</translation>
    </message>
    <message>
        <source>Replayed: step %1</source>
        <translation>重放：步时间 %1</translation>
    </message>
    <message>
        <source> · %1 samples/s</source>
        <translation> · %1 样本/秒</translation>
    </message>
    <message>
        <source>Predicted: step %1</source>
        <translation>预测：步时间 %1</translation>
    </message>
    <message>
        <source>Step time: — (no run yet)</source>
        <translation>步时间：—（尚未运行）</translation>
    </message>
    <message>
        <source>device %1</source>
        <translation>设备 %1</translation>
    </message>
    <message>
        <source>warm-up only</source>
        <translation>仅预热</translation>
    </message>
    <message>
        <source>mean of steps %1–%2, warm-up left out</source>
        <translation>第 %1–%2 步的平均，不计预热</translation>
    </message>
    <message>
        <source>Measured: step %1 (%2) · %3 samples/s</source>
        <translation>实测：步时间 %1（%2）· %3 样本/秒</translation>
    </message>
    <message>
        <source> · MFU %1% (%2 TFLOP/s per device)</source>
        <translation> · MFU %1%（每设备 %2 TFLOP/s）</translation>
    </message>
    <message>
        <source> · data-parallel traffic %1 per device and step%2</source>
        <translation> · 每设备每步数据并行通信量 %1%2</translation>
    </message>
    <message>
        <source> (ZeRO %1)</source>
        <translation>（ZeRO %1）</translation>
    </message>
    <message>
        <source> · context-parallel ring traffic %1 per device and step</source>
        <translation> · 每设备每步上下文并行环通信量 %1</translation>
    </message>
</context>
<context>
    <name>pipelab::TimelineChart</name>
    <message>
        <source>time (ms)</source>
        <translation>时间（ms）</translation>
    </message>
    <message>
        <source>bubble (idle)</source>
        <translation>气泡（空闲）</translation>
    </message>
    <message>
        <source>F forward</source>
        <translation>F 前向</translation>
    </message>
    <message>
        <source>B backward</source>
        <translation>B 反向</translation>
    </message>
    <message>
        <source>BI input grad</source>
        <translation>BI 输入梯度</translation>
    </message>
    <message>
        <source>BW weight grad</source>
        <translation>BW 权重梯度</translation>
    </message>
    <message>
        <source>U update</source>
        <translation>U 更新</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>send/recv</source>
        <translation>发送/接收</translation>
    </message>
    <message>
        <source>push/pull</source>
        <translation>推送/拉取</translation>
    </message>
    <message>
        <source>offload/reload</source>
        <translation>卸载/取回</translation>
    </message>
    <message>
        <source>warm-up (left out of the statistics)</source>
        <translation>预热（不计入统计）</translation>
    </message>
    <message>
        <source>v2, strip: weight version an op reads (one colour per version); U v3 makes v3 current</source>
        <translation>v2 与色带：操作读取的权重版本（每个版本一种颜色）；U v3 让 v3 成为当前版本</translation>
    </message>
    <message>
        <source>v2, strip: weight version a replica computes on (one colour per version), the newest it pulled</source>
        <translation>v2 与色带：副本计算所用的权重版本（每个版本一种颜色），即它拉取的最新版本</translation>
    </message>
    <message>
        <source>all-reduce (RS, AG)</source>
        <translation>全归约（RS、AG）</translation>
    </message>
    <message>
        <source>all-to-all</source>
        <translation>全对全</translation>
    </message>
</context>
<context>
    <name>pipelab::TimelineView</name>
    <message>
        <source>Measured: no run yet. Press Run (Space) or Step (→).</source>
        <translation>实测：尚未运行。按“运行”（空格）或“单步”（→）。</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Predicted under measured</source>
        <translation>预测在实测下方</translation>
    </message>
    <message>
        <source>Predicted beside measured</source>
        <translation>预测在实测旁边</translation>
    </message>
    <message>
        <source>Measured only</source>
        <translation>仅实测</translation>
    </message>
    <message>
        <source>Predicted only</source>
        <translation>仅预测</translation>
    </message>
    <message>
        <source>Replayed under measured</source>
        <translation>重放在实测下方</translation>
    </message>
    <message>
        <source>Predicted under replayed</source>
        <translation>预测在重放下方</translation>
    </message>
    <message>
        <source>Measured, replayed and predicted</source>
        <translation>实测、重放和预测</translation>
    </message>
    <message>
        <source>Replayed: the measured op times laid out on the schedule, one core per device; compare it with the prediction when the machine has fewer cores than devices</source>
        <translation>重放：把实测的操作时间按调度排布，每个设备一个核；当机器的核数少于设备数时，用它与预测对比</translation>
    </message>
    <message>
        <source>Follow live</source>
        <translation>跟随实时</translation>
    </message>
    <message>
        <source>Keep the newest events in view; dragging the chart turns it off</source>
        <translation>保持最新事件在视野中；拖动图表会关闭它</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>适应窗口</translation>
    </message>
    <message>
        <source>Show everything (or double-click a chart)</source>
        <translation>显示全部（或双击图表）</translation>
    </message>
    <message>
        <source>drag to pan · wheel to zoom · hover an op for details</source>
        <translation>拖动平移 · 滚轮缩放 · 悬停操作查看详情</translation>
    </message>
    <message>
        <source>Show:</source>
        <translation>显示：</translation>
    </message>
    <message>
        <source>Predicted: nothing to simulate</source>
        <translation>预测：没有可模拟的内容</translation>
    </message>
    <message>
        <source>Predicted: not available until the problems in the panels (marked ⚠) are fixed, e.g. %1</source>
        <translation>预测：需先修正面板中的问题（标有 ⚠），例如 %1</translation>
    </message>
    <message>
        <source>unit costs</source>
        <translation>单位代价</translation>
    </message>
    <message>
        <source>Predicted (%1, simulated on %2): makespan %3 · bubble %4</source>
        <translation>预测（%1，在 %2 上模拟）：总时长 %3 · 气泡 %4</translation>
    </message>
    <message>
        <source> · from %1 steps so far</source>
        <translation> · 基于目前的 %1 步</translation>
    </message>
    <message>
        <source>Replayed (measured op times on the schedule, one core per device): step %1 · bubble %2%3</source>
        <translation>重放（实测操作时间按调度排布，每设备一个核）：步时间 %1 · 气泡 %2%3</translation>
    </message>
    <message>
        <source>Replayed: not available: %1</source>
        <translation>重放：不可用：%1</translation>
    </message>
    <message>
        <source>Replayed: the measured op times on the schedule, one core per device; shown a few seconds into the run and when it ends</source>
        <translation>重放：实测操作时间按调度排布，每设备一个核；运行几秒后以及运行结束时显示</translation>
    </message>
    <message>
        <source>Replayed: no run yet. After a run, its measured op times are laid out here on the schedule, one core per device.</source>
        <translation>重放：尚未运行。运行后，实测的操作时间会按调度排布在这里，每设备一个核。</translation>
    </message>
    <message>
        <source>CUDA</source>
        <translation>CUDA</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程</translation>
    </message>
    <message>
        <source> · replaying at %1 of %2</source>
        <translation> · 正在回放 %1 / %2</translation>
    </message>
    <message>
        <source>Measured (%1, %2): step %3 of %4 · %5%6</source>
        <translation>实测（%1，%2）：第 %3 步，共 %4 步 · %5%6</translation>
    </message>
    <message>
        <source>Show the replayed view</source>
        <translation>显示重放视图</translation>
    </message>
    <message>
        <source>The measured op times laid out on the schedule, one core per device, above the prediction</source>
        <translation>把实测的操作时间按调度排布，每个设备一个核，显示在预测上方</translation>
    </message>
    <message>
        <source>1 core</source>
        <translation>1 个核</translation>
    </message>
    <message>
        <source>%1 cores</source>
        <translation>%1 个核</translation>
    </message>
    <message>
        <source>This machine has %1 for %2 virtual devices: the measured timeline is mostly threads waiting for a core, not the schedule. The replayed view lays the measured op times out with one core per device.</source>
        <translation>本机只有 %1，却要运行 %2 个虚拟设备：实测时间线主要反映线程在等待核，而不是调度本身。重放视图把实测的操作时间按每个设备一个核排布。</translation>
    </message>
</context>
<context>
    <name>pipelab::TrainingView</name>
    <message>
        <source>training step</source>
        <translation>训练步</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>loss (training batch)</source>
        <translation>损失（训练批次）</translation>
    </message>
    <message>
        <source>loss (validation)</source>
        <translation>损失（验证）</translation>
    </message>
    <message>
        <source>accuracy (training batch)</source>
        <translation>准确率（训练批次）</translation>
    </message>
    <message>
        <source>accuracy (validation)</source>
        <translation>准确率（验证）</translation>
    </message>
</context>
</TS>
