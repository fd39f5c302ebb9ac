//! Compiling toy functions to machine code with Cranelift, keeping each
//! instruction's source line and column (as Cranelift source locations).

use std::collections::HashMap;

use cranelift_codegen::ir::{types::I64, AbiParam, InstBuilder, SourceLoc, Value};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};

use crate::lexer::Pos;
use crate::parser::{Expr, Function, Stmt};

/// A compiled function: where its code is and which lines it came from.
pub struct Compiled {
    pub name: String,
    pub file: String,
    pub id: FuncId,
    pub size: usize,
    /// (code offset, line, column), ascending by offset.
    pub lines: Vec<(u32, u32, u32)>,
}

/// The native runtime function `print(x)` calls.
extern "C" fn toy_print(value: i64) -> i64 {
    println!("{value}");
    value
}

/// Source positions travel through Cranelift as `line << 10 | column`.
fn srcloc(pos: Pos) -> SourceLoc {
    SourceLoc::new(pos.line << 10 | pos.col.min(1023))
}

/// Compiles all `functions` (with the file each came from) into one module.
pub fn compile(functions: &[(Function, String)]) -> Result<(JITModule, Vec<Compiled>), String> {
    let mut flags = settings::builder();
    flags.set("is_pic", "false").map_err(|e| e.to_string())?;
    let isa = cranelift_native::builder()?
        .finish(settings::Flags::new(flags))
        .map_err(|e| e.to_string())?;
    let mut jit = JITBuilder::with_isa(isa, default_libcall_names());
    jit.symbol("toy_print", toy_print as *const u8);
    let mut module = JITModule::new(jit);
    let mut ids = HashMap::new();
    ids.insert(
        "print".to_string(),
        (declare(&mut module, "toy_print", 1, Linkage::Import)?, 1),
    );
    for (f, _) in functions {
        let id = declare(&mut module, &f.name, f.params.len(), Linkage::Local)?;
        if ids.insert(f.name.clone(), (id, f.params.len())).is_some() {
            return Err(format!("function '{}' is defined twice", f.name));
        }
    }
    let mut compiled = Vec::new();
    for (f, file) in functions {
        compiled.push(define(&mut module, &ids, f, file)?);
    }
    module.finalize_definitions().map_err(|e| e.to_string())?;
    Ok((module, compiled))
}

fn declare(
    module: &mut JITModule,
    name: &str,
    arity: usize,
    linkage: Linkage,
) -> Result<FuncId, String> {
    let mut sig = module.make_signature();
    sig.params
        .extend(std::iter::repeat_n(AbiParam::new(I64), arity));
    sig.returns.push(AbiParam::new(I64));
    module
        .declare_function(name, linkage, &sig)
        .map_err(|e| e.to_string())
}

fn define(
    module: &mut JITModule,
    ids: &HashMap<String, (FuncId, usize)>,
    f: &Function,
    file: &str,
) -> Result<Compiled, String> {
    let (id, _) = ids[&f.name];
    let config = module.target_config();
    let mut ctx = module.make_context();
    ctx.func.signature = module
        .declarations()
        .get_function_decl(id)
        .signature
        .clone();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    b.set_srcloc(srcloc(f.pos));
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let mut gen = Gen {
        b,
        module,
        ids,
        vars: HashMap::new(),
    };
    for (i, name) in f.params.iter().enumerate() {
        let value = gen.b.block_params(entry)[i];
        let var = gen.b.declare_var(I64);
        gen.b.def_var(var, value);
        gen.vars.insert(name.clone(), var);
    }
    gen.block(&f.body)?;
    let zero = gen.b.ins().iconst(I64, 0);
    gen.b.ins().return_(&[zero]);
    gen.b.seal_all_blocks();
    gen.b.finalize(config);
    module
        .define_function(id, &mut ctx)
        .map_err(|e| format!("{}: {e:?}", f.name))?;
    let code = ctx.compiled_code().ok_or("no compiled code")?;
    let lines = code
        .buffer
        .get_srclocs_sorted()
        .iter()
        .map(|l| (l.start, l.loc))
        .filter(|(_, loc)| !loc.is_default())
        .map(|(start, loc)| (start, loc.bits() >> 10, loc.bits() & 1023))
        .collect();
    Ok(Compiled {
        name: f.name.clone(),
        file: file.to_string(),
        id,
        size: code.code_buffer().len(),
        lines,
    })
}

/// Code generation state of one function.
struct Gen<'a> {
    b: FunctionBuilder<'a>,
    module: &'a mut JITModule,
    ids: &'a HashMap<String, (FuncId, usize)>,
    vars: HashMap<String, Variable>,
}

impl Gen<'_> {
    fn block(&mut self, stmts: &[Stmt]) -> Result<(), String> {
        stmts.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<(), String> {
        match stmt {
            Stmt::Let(name, e, pos) | Stmt::Assign(name, e, pos) => {
                let value = self.expr(e)?;
                self.b.set_srcloc(srcloc(*pos));
                let var = match (stmt, self.vars.get(name)) {
                    (Stmt::Assign(..), Some(&var)) => var,
                    (Stmt::Assign(..), None) => {
                        return Err(at(*pos, &format!("unknown variable '{name}'")))
                    }
                    _ => self.b.declare_var(I64),
                };
                self.b.def_var(var, value);
                self.vars.insert(name.clone(), var);
            }
            Stmt::While(cond, body, pos) => {
                self.b.set_srcloc(srcloc(*pos));
                self.while_loop(cond, body)?
            }
            Stmt::If(cond, then, otherwise, pos) => {
                self.b.set_srcloc(srcloc(*pos));
                self.if_else(cond, then, otherwise)?
            }
            Stmt::Return(e, pos) => {
                let value = self.expr(e)?;
                self.b.set_srcloc(srcloc(*pos));
                self.b.ins().return_(&[value]);
                // Code after a return is unreachable; give it a block.
                let dead = self.b.create_block();
                self.b.switch_to_block(dead);
            }
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
        }
        Ok(())
    }

    fn while_loop(&mut self, cond: &Expr, body: &[Stmt]) -> Result<(), String> {
        let (head, inner, exit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let c = self.expr(cond)?;
        self.b.ins().brif(c, inner, &[], exit, &[]);
        self.b.switch_to_block(inner);
        self.block(body)?;
        self.b.set_srcloc(srcloc(cond.pos()));
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
        Ok(())
    }

    fn if_else(&mut self, cond: &Expr, then: &[Stmt], otherwise: &[Stmt]) -> Result<(), String> {
        let (yes, no, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let c = self.expr(cond)?;
        self.b.ins().brif(c, yes, &[], no, &[]);
        for (block, body) in [(yes, then), (no, otherwise)] {
            self.b.switch_to_block(block);
            self.block(body)?;
            self.b.ins().jump(join, &[]);
        }
        self.b.switch_to_block(join);
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> Result<Value, String> {
        let value = match e {
            Expr::Int(v, pos) => {
                self.b.set_srcloc(srcloc(*pos));
                self.b.ins().iconst(I64, *v)
            }
            Expr::Var(name, pos) => {
                let var = *self
                    .vars
                    .get(name)
                    .ok_or_else(|| at(*pos, &format!("unknown variable '{name}'")))?;
                self.b.use_var(var)
            }
            Expr::Call(name, args, pos) => self.call(name, args, *pos)?,
            Expr::Binary(op, l, r, pos) => {
                let (l, r) = (self.expr(l)?, self.expr(r)?);
                self.b.set_srcloc(srcloc(*pos));
                self.binary(op, l, r)
            }
        };
        Ok(value)
    }

    fn call(&mut self, name: &str, args: &[Expr], pos: Pos) -> Result<Value, String> {
        let &(id, arity) = self
            .ids
            .get(name)
            .ok_or_else(|| at(pos, &format!("unknown function '{name}'")))?;
        if arity != args.len() {
            return Err(at(pos, &format!("'{name}' takes {arity} arguments")));
        }
        let values = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>, _>>()?;
        self.b.set_srcloc(srcloc(pos));
        let callee = self.module.declare_func_in_func(id, self.b.func);
        let call = self.b.ins().call(callee, &values);
        Ok(self.b.inst_results(call)[0])
    }

    fn binary(&mut self, op: &str, l: Value, r: Value) -> Value {
        use cranelift_codegen::ir::condcodes::IntCC;
        let cmp = |cc| Some(cc);
        let cc = match op {
            "<" => cmp(IntCC::SignedLessThan),
            ">" => cmp(IntCC::SignedGreaterThan),
            "<=" => cmp(IntCC::SignedLessThanOrEqual),
            ">=" => cmp(IntCC::SignedGreaterThanOrEqual),
            "==" => cmp(IntCC::Equal),
            "!=" => cmp(IntCC::NotEqual),
            _ => None,
        };
        if let Some(cc) = cc {
            let flag = self.b.ins().icmp(cc, l, r);
            return self.b.ins().uextend(I64, flag);
        }
        match op {
            "+" => self.b.ins().iadd(l, r),
            "-" => self.b.ins().isub(l, r),
            "*" => self.b.ins().imul(l, r),
            "/" => self.b.ins().sdiv(l, r),
            _ => self.b.ins().srem(l, r),
        }
    }
}

fn at(pos: Pos, message: &str) -> String {
    format!("{}:{}: {message}", pos.line, pos.col)
}
