package lc4jharness;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import javax.lang.model.SourceVersion;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import reactconformance.Protocol;

/**
 * The suite's tools in LangChain4j's documented primary form: a class of {@code @Tool} methods,
 * one per tool, each parameter a Java parameter with its {@code @P} description (named by javac's
 * -parameters, as LangChain4j reads it). The suite's tools are known only at `build`, so the class
 * is written then and compiled with the JDK's compiler.
 */
public final class ToolClasses {
    /** What each generated method calls: the suite's tool, by name, with its args by name. */
    public interface Bridge {
        Object call(String tool, Map<String, Object> args);
    }

    private static final Map<String, String> JAVA_TYPE = Map.of("str", "String", "int", "long",
            "float", "double", "bool", "boolean", "list", "java.util.List<Object>",
            "dict", "java.util.Map<String, Object>");
    private static final AtomicInteger NEXT = new AtomicInteger();

    private ToolClasses() {}

    /** An instance of a new class of @Tool methods for {@code tools}, each calling {@code bridge}. */
    static Object instance(List<Object> tools, Bridge bridge) throws Exception {
        String name = "Tools" + NEXT.incrementAndGet();
        StringBuilder source = new StringBuilder("package lc4jgenerated;\n\n"
                + "import dev.langchain4j.agent.tool.P;\nimport dev.langchain4j.agent.tool.Tool;\n\n"
                + "public final class " + name + " {\n"
                + "    private final lc4jharness.ToolClasses.Bridge bridge;\n\n"
                + "    public " + name + "(lc4jharness.ToolClasses.Bridge bridge) { this.bridge = bridge; }\n");
        int index = 0;
        for (Object t : tools) {
            Map<String, Object> tool = Protocol.asObject(t);
            List<String> params = new ArrayList<>();
            List<String> args = new ArrayList<>();
            for (Object p : Protocol.asList(tool.get("parameters"))) {
                Map<String, Object> param = Protocol.asObject(p);
                String paramName = Protocol.asString(param.get("name"));
                if (!SourceVersion.isName(paramName)) {
                    throw new IllegalArgumentException("LangChain4j names a @Tool method's parameters by their Java "
                            + "names: " + paramName + " is not a Java name");
                }
                String type = JAVA_TYPE.get(Protocol.asString(param.get("type")));
                params.add("@P(" + Protocol.stringify(Protocol.asString(param.get("description"))) + ") " + type + " "
                        + paramName);
                args.add(Protocol.stringify(paramName) + ", " + paramName);
            }
            source.append("\n    @Tool(name = ").append(Protocol.stringify(Protocol.asString(tool.get("name"))))
                    .append(", value = ").append(Protocol.stringify(Protocol.asString(tool.get("description"))))
                    .append(")\n    public Object tool").append(index++).append('(').append(String.join(", ", params))
                    .append(") {\n        java.util.Map<String, Object> args = new java.util.LinkedHashMap<>();\n");
            for (String arg : args) {
                source.append("        args.put(").append(arg).append(");\n");
            }
            source.append("        return bridge.call(").append(Protocol.stringify(Protocol.asString(tool.get("name"))))
                    .append(", args);\n    }\n");
        }
        source.append("}\n");
        Path folder = Files.createTempDirectory("lc4j-tools");
        Path file = folder.resolve("lc4jgenerated").resolve(name + ".java");
        Files.createDirectories(file.getParent());
        Files.writeString(file, source, StandardCharsets.UTF_8);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
        int status = javac.run(null, errors, errors, "-parameters", "-proc:none", "-cp",
                System.getProperty("java.class.path"), "-d", folder.toString(), file.toString());
        if (status != 0) {
            throw new IOException("the @Tool class did not compile: " + errors.toString(StandardCharsets.UTF_8)
                    + "\n" + source);
        }
        @SuppressWarnings("resource") // kept open: the class lives as long as the agent
        URLClassLoader loader = new URLClassLoader(new URL[] {folder.toUri().toURL()}, ToolClasses.class.getClassLoader());
        Object instance = loader.loadClass("lc4jgenerated." + name).getConstructor(Bridge.class).newInstance(bridge);
        // The class is defined now (it has no nested classes to load later): its files can go.
        try (java.util.stream.Stream<Path> files = Files.walk(folder)) {
            for (Path path : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
        return instance;
    }
}
